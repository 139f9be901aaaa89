"""Cached responses on Redis: each group has a generation number, and an entry's key
holds the generation it was written in, so invalidating a group is one INCR; a read
(generation, then entry) is one script, one round trip."""

from __future__ import annotations

from mcpgen.stores.redis._base import Connection, guard

__all__ = ["RedisResponseStore"]

# KEYS[1]: the group's generation; ARGV[1]: the entry key's prefix, ARGV[2]: its key.
_GET = """
local gen = redis.call('GET', KEYS[1]) or '0'
return redis.call('GET', ARGV[1] .. gen .. ':' .. ARGV[2])
"""
# The same, and ARGV[3]: the value, ARGV[4]: its ttl in ms.
_PUT = """
local gen = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', ARGV[1] .. gen .. ':' .. ARGV[2], ARGV[3], 'PX', ARGV[4])
return 1
"""


class RedisResponseStore:
    """A `ResponseStore` on Redis, shared by every worker."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._under = connection.under
        client = connection.client
        self._get, self._put = client.register_script(_GET), client.register_script(_PUT)

    def _keys(self, group: str) -> tuple[str, str]:
        """A group's generation and its entries' prefix: one group of keys (one slot)."""
        under = self._under("rc:" + group)
        return under + "rc:gen:" + group, under + "rc:e:" + group + ":"

    async def get(self, group: str, key: str) -> bytes | None:
        gen, entries = self._keys(group)
        async with guard(self.connection.url):
            found = await self._get(keys=[gen], args=[entries, key])
        return None if found is None else bytes(found)

    async def put(self, group: str, key: str, value: bytes, ttl_ms: int) -> None:
        gen, entries = self._keys(group)
        async with guard(self.connection.url):
            await self._put(keys=[gen], args=[entries, key, value, max(1, ttl_ms)])

    async def invalidate(self, group: str) -> None:
        async with guard(self.connection.url):
            await self.connection.client.incr(self._keys(group)[0])
