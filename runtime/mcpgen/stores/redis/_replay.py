"""The replay cache on Redis: one key per identifier, set only if absent, expiring
with it (`SET NX PX`), so every worker refuses a second use."""

from __future__ import annotations

import hashlib

from mcpgen.stores.redis._base import Connection, guard

__all__ = ["RedisReplayCache"]


class RedisReplayCache:
    """A `ReplayCache` every worker on `connection` shares. Keys are hashed (a client
    chooses them, so their length and bytes are not trusted into Redis key names)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._prefix = connection.prefix + "replay:"

    async def first_use(self, key: str, ttl: float) -> bool:
        name = self._prefix + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        async with guard(self.connection.url):
            stored = await self.connection.client.set(
                name, b"1", nx=True, px=max(1, int(ttl * 1000))
            )
        return bool(stored)
