"""Legacy session state in Redis: the `SessionStore` every worker shares.

Keys (under the connection's prefix): `s:<id>` holds the msgpack-encoded
`SessionState`; the sorted set `s:used` scores every id by its last use (by the
store's clock), which gives the idle timeout and the least-recently-used bound.
Each operation is one Lua script, so one round trip, and atomic: two workers saving
the same session cannot leave a state without its use time. Redis's own expiry
(`idle_timeout`, in real seconds) removes a forgotten session's state even if no
worker sweeps again; the scripts treat an entry whose state is gone as gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from mcpgen.stores._interfaces import SessionState
from mcpgen.stores.redis._base import Arg as _Arg
from mcpgen.stores.redis._base import Connection, guard

__all__ = ["RedisSessionStore"]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(SessionState).decode

# KEYS[1] the used set; ARGV: prefix, id, now, idle, data, most, ttl_ms
_CREATE = """
local used, prefix = KEYS[1], ARGV[1]
local oldest = tonumber(ARGV[3]) - tonumber(ARGV[4])
local stale = redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. oldest)
for _, sid in ipairs(stale) do redis.call('DEL', prefix .. sid) end
if #stale > 0 then redis.call('ZREM', used, unpack(stale)) end
local most = tonumber(ARGV[6])
while redis.call('ZCARD', used) >= most do
  local gone = redis.call('ZPOPMIN', used)
  redis.call('DEL', prefix .. gone[1])
end
redis.call('SET', prefix .. ARGV[2], ARGV[5], 'PX', ARGV[7])
redis.call('ZADD', used, ARGV[3], ARGV[2])
return 1
"""

# KEYS[1] the used set, KEYS[2] the state; ARGV: id, now, idle, ttl_ms, data ('' for a load)
_TOUCH = """
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then return false end
if tonumber(ARGV[2]) - tonumber(seen) > tonumber(ARGV[3]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  return false
end
local data = ARGV[5]
if data == '' then
  data = redis.call('GET', KEYS[2])
  if not data then
    redis.call('ZREM', KEYS[1], ARGV[1])
    return false
  end
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
elseif redis.call('SET', KEYS[2], data, 'XX', 'PX', ARGV[4]) == false then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return false
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return data
"""


class RedisSessionStore:
    """Sessions by id in Redis, bounded as the in-memory store is: one unused for
    `idle_timeout` seconds is gone, and creating one past `max_sessions` evicts the
    least recently used. `clock` gives wall-clock seconds (every worker's must agree).
    """

    def __init__(
        self,
        connection: Connection,
        *,
        idle_timeout: float = 1800.0,
        max_sessions: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.connection = connection
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.clock = clock
        self._prefix = connection.prefix + "s:"
        self._used = connection.prefix + "s-used"
        self._ttl_ms = str(max(1, int(idle_timeout * 1000)))
        client = connection.client
        self._create = client.register_script(_CREATE)
        self._touch = client.register_script(_TOUCH)

    async def create(self, state: SessionState) -> None:
        args: list[_Arg] = [
            self._prefix,
            state.id,
            repr(self.clock()),
            repr(self.idle_timeout),
            _encode(state),
            self.max_sessions,
            self._ttl_ms,
        ]
        async with guard(self.connection.url):
            await self._create(keys=[self._used], args=args)

    async def load(self, session_id: str) -> SessionState | None:
        data = await self._run(session_id, b"")
        return None if data is None else _decode(data)

    async def save(self, state: SessionState) -> None:
        await self._run(state.id, _encode(state))

    async def delete(self, session_id: str) -> bool:
        async with guard(self.connection.url):
            pipe = self.connection.client.pipeline(transaction=True)
            pipe.zrem(self._used, session_id)
            pipe.delete(self._prefix + session_id)
            removed, deleted = await pipe.execute()
        return bool(removed) and bool(deleted)

    async def _run(self, session_id: str, data: bytes) -> bytes | None:
        keys = [self._used, self._prefix + session_id]
        args: list[_Arg] = [
            session_id,
            repr(self.clock()),
            repr(self.idle_timeout),
            self._ttl_ms,
            data,
        ]
        async with guard(self.connection.url):
            found = await self._touch(keys=keys, args=args)
        return found if isinstance(found, bytes) else None
