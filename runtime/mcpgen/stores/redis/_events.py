"""The events of resumable SSE streams in Redis: the `EventStore` every worker shares,
so a client may resume with `Last-Event-ID` on whichever worker it reaches.

An event id is `<stream key>.<sequence number>` as in the in-memory store; the random
stream key finds the stream. Keys under the prefix: `e-ids` (a hash: stream id ->
stream key), `e-meta:<key>` (a hash: stream id, newest sequence number, last append
time), `e-list:<key>` (the frames, oldest first), `e-used` (a sorted set of stream
keys by last append time, for the ttl and the total bound) and `e-total` (events held
in all). Appending and replaying are one Lua script each: one round trip, atomic.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable

from mcpgen.stores._interfaces import Replay
from mcpgen.stores.redis._base import Arg as _Arg
from mcpgen.stores.redis._base import Connection, guard

__all__ = ["RedisEventStore"]

_DROP = """
local function drop(p, key)
  local list = p .. 'e-list:' .. key
  redis.call('DECRBY', p .. 'e-total', redis.call('LLEN', list))
  local stream = redis.call('HGET', p .. 'e-meta:' .. key, 'stream')
  if stream then redis.call('HDEL', p .. 'e-ids', stream) end
  redis.call('DEL', list, p .. 'e-meta:' .. key)
  redis.call('ZREM', p .. 'e-used', key)
end
"""

# ARGV: prefix, stream id, frame, now, ttl, per stream, total, a fresh key, ttl in ms
_APPEND = (
    _DROP
    + """
local p, sid, now = ARGV[1], ARGV[2], tonumber(ARGV[4])
local used = p .. 'e-used'
for _, key in ipairs(redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. (now - tonumber(ARGV[5])))) do
  drop(p, key)
end
local key = redis.call('HGET', p .. 'e-ids', sid)
if not key then
  key = ARGV[8]
  redis.call('HSET', p .. 'e-ids', sid, key)
  redis.call('HSET', p .. 'e-meta:' .. key, 'stream', sid, 'last', 0)
end
local meta, list = p .. 'e-meta:' .. key, p .. 'e-list:' .. key
local last = redis.call('HINCRBY', meta, 'last', 1)
redis.call('HSET', meta, 'touched', ARGV[4])
redis.call('RPUSH', list, ARGV[3])
redis.call('ZADD', used, now, key)
local total = redis.call('INCR', p .. 'e-total')
if redis.call('LLEN', list) > tonumber(ARGV[6]) then
  redis.call('LPOP', list)
  total = redis.call('DECR', p .. 'e-total')
end
while total > tonumber(ARGV[7]) do
  local oldest = redis.call('ZRANGE', used, 0, 0)[1]
  local olist = p .. 'e-list:' .. oldest
  redis.call('LPOP', olist)
  total = redis.call('DECR', p .. 'e-total')
  if redis.call('LLEN', olist) == 0 then drop(p, oldest) end
end
redis.call('PEXPIRE', meta, ARGV[9])
redis.call('PEXPIRE', list, ARGV[9])
return key .. '.' .. last
"""
)

# ARGV: prefix, stream key, after, now, ttl
_REPLAY = (
    _DROP
    + """
local p, key, after = ARGV[1], ARGV[2], tonumber(ARGV[3])
local meta = redis.call('HMGET', p .. 'e-meta:' .. key, 'stream', 'last', 'touched')
if not meta[1] then return false end
if tonumber(ARGV[4]) - tonumber(meta[3]) > tonumber(ARGV[5]) then
  drop(p, key)
  return false
end
local list = p .. 'e-list:' .. key
local last, held = tonumber(meta[2]), redis.call('LLEN', list)
local oldest = last - held + 1
if after < oldest - 1 or after > last then return false end
local out = {meta[1], tostring(after + 1)}
for _, frame in ipairs(redis.call('LRANGE', list, after - oldest + 1, -1)) do
  table.insert(out, frame)
end
return out
"""
)


class RedisEventStore:
    """Events by stream in Redis, bounded as the in-memory store is: `max_per_stream`
    per stream, `max_events` in all (the least recently appended-to stream gives up
    its oldest first), and a stream idle for `ttl` seconds (by `clock`, wall-clock
    seconds shared by every worker) is forgotten. A replay from an id older than what
    the stream still holds is refused (None), never answered with a gap."""

    def __init__(
        self,
        connection: Connection,
        *,
        max_per_stream: int = 1_000,
        max_events: int = 100_000,
        ttl: float = 600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.connection = connection
        self.max_per_stream = max_per_stream
        self.max_events = max_events
        self.ttl = ttl
        self.clock = clock
        client = connection.client
        self._append = client.register_script(_APPEND)
        self._replay = client.register_script(_REPLAY)

    async def append(self, stream_id: str, frame: bytes) -> str:
        fresh = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
        args: list[_Arg] = [
            self.connection.prefix,
            stream_id,
            frame,
            repr(self.clock()),
            repr(self.ttl),
            self.max_per_stream,
            self.max_events,
            fresh,
            max(1, int(self.ttl * 1000)),
        ]
        async with guard(self.connection.url):
            event_id = await self._append(args=args)
        return event_id.decode("ascii") if isinstance(event_id, bytes) else str(event_id)

    async def replay(self, last_event_id: str) -> Replay | None:
        key, _, number = last_event_id.rpartition(".")
        if not key or not number.isdigit() or len(number) > 18:
            return None
        args: list[_Arg] = [self.connection.prefix, key, number, repr(self.clock()), repr(self.ttl)]
        async with guard(self.connection.url):
            found = await self._replay(args=args)
        if not isinstance(found, list):
            return None
        stream, first, *frames = found
        seq = int(first)
        events = [(f"{key}.{seq + i}", bytes(frame)) for i, frame in enumerate(frames)]
        return Replay(stream.decode(), events)
