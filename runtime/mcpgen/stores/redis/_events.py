"""The events of resumable SSE streams in Redis: the `EventStore` every worker shares,
so a client may resume with `Last-Event-ID` on whichever worker it reaches.

An event id is `<stream key>.<sequence number>` as in the in-memory store; the random
stream key finds the stream. Keys under the prefix: `e-ids` (a hash: stream id ->
stream key), `e-meta:<key>` (a hash: stream id, newest sequence number, last append
time), `e-list:<key>` (the frames, oldest first), `e-used` (a sorted set of stream
keys by last append time, for the ttl and the total bound), `e-total` (events held
in all) and `e-keys:<key>` (the dedup keys of `deliver`, by sequence number; the
claimed mark of `claim` is the field `done` of `e-meta`). Each operation is one Lua
script: one round trip, atomic.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Sequence

from redis import exceptions as rex

from mcpgen.stores._events import Delivery
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
  redis.call('DEL', list, p .. 'e-meta:' .. key, p .. 'e-keys:' .. key)
  redis.call('ZREM', p .. 'e-used', key)
end
"""

_APPEND_FN = (
    _DROP
    + """
local function append(p, sid, frame, now_s, ttl, per_stream, max_total, fresh, ttl_ms)
  local now = tonumber(now_s)
  local used = p .. 'e-used'
  for _, key in ipairs(redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. (now - tonumber(ttl)))) do
    drop(p, key)
  end
  local key = redis.call('HGET', p .. 'e-ids', sid)
  if not key then
    key = fresh
    redis.call('HSET', p .. 'e-ids', sid, key)
    redis.call('HSET', p .. 'e-meta:' .. key, 'stream', sid, 'last', 0)
  end
  local meta, list = p .. 'e-meta:' .. key, p .. 'e-list:' .. key
  local last = redis.call('HINCRBY', meta, 'last', 1)
  redis.call('HSET', meta, 'touched', now_s)
  redis.call('RPUSH', list, frame)
  redis.call('ZADD', used, now, key)
  local total = redis.call('INCR', p .. 'e-total')
  if redis.call('LLEN', list) > tonumber(per_stream) then
    redis.call('LPOP', list)
    total = redis.call('DECR', p .. 'e-total')
  end
  while total > tonumber(max_total) do
    local oldest = redis.call('ZRANGE', used, 0, 0)[1]
    local olist = p .. 'e-list:' .. oldest
    redis.call('LPOP', olist)
    total = redis.call('DECR', p .. 'e-total')
    if redis.call('LLEN', olist) == 0 then drop(p, oldest) end
  end
  redis.call('PEXPIRE', meta, ttl_ms)
  redis.call('PEXPIRE', list, ttl_ms)
  return key, last
end
"""
)

# ARGV: prefix, stream id, frame, now, ttl, per stream, total, a fresh key, ttl in ms
_APPEND = (
    _APPEND_FN
    + """
local key, last = append(unpack(ARGV, 1, 9))
return key .. '.' .. last
"""
)

# ARGV: as _APPEND, then the event's dedup key and "1" to claim it. The dedup keys of a
# stream live in a sorted set by sequence number, bounded as the stream is.
_DELIVER = (
    _APPEND_FN
    + """
local p, sid, dk = ARGV[1], ARGV[2], ARGV[10]
local key = redis.call('HGET', p .. 'e-ids', sid)
local seq = key and redis.call('ZSCORE', p .. 'e-keys:' .. key, dk)
if seq then
  seq = tonumber(seq)
else
  key, seq = append(unpack(ARGV, 1, 9))
  local keys = p .. 'e-keys:' .. key
  redis.call('ZADD', keys, seq, dk)
  redis.call('ZREMRANGEBYRANK', keys, 0, -1 - tonumber(ARGV[6]))
  redis.call('PEXPIRE', keys, ARGV[9])
end
local claimed = 0
if ARGV[11] == '1' then
  local meta = p .. 'e-meta:' .. key
  if seq > tonumber(redis.call('HGET', meta, 'done') or '0') then
    redis.call('HSET', meta, 'done', seq)
    claimed = 1
  end
end
return {key .. '.' .. seq, claimed}
"""
)

# ARGV: prefix, stream id, after (a sequence number, or '' for the claimed mark), the
# key `after` was issued under (or ''), now, ttl
_CLAIM = (
    _DROP
    + """
local p, sid, after = ARGV[1], ARGV[2], ARGV[3]
local key = redis.call('HGET', p .. 'e-ids', sid)
if not key then return after == '' and {} or false end
local meta = redis.call('HMGET', p .. 'e-meta:' .. key, 'last', 'touched', 'done')
if not meta[1] or tonumber(ARGV[5]) - tonumber(meta[2]) > tonumber(ARGV[6]) then
  drop(p, key)
  return after == '' and {} or false
end
local list = p .. 'e-list:' .. key
local last, done, held = tonumber(meta[1]), tonumber(meta[3] or '0'), redis.call('LLEN', list)
local oldest = last - held + 1
local start = done
if after ~= '' then
  start = tonumber(after)
  if ARGV[4] ~= key or start < oldest - 1 or start > last then return false end
end
if last > done then redis.call('HSET', p .. 'e-meta:' .. key, 'done', last) end
local first = math.max(start + 1, oldest)
local out = {key, tostring(first)}
for _, frame in ipairs(redis.call('LRANGE', list, first - oldest, -1)) do
  table.insert(out, frame)
end
return out
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
        self._deliver = client.register_script(_DELIVER)
        self._claim = client.register_script(_CLAIM)

    def _append_args(self, stream_id: str, frame: bytes) -> list[_Arg]:
        fresh = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
        return [
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

    async def append(self, stream_id: str, frame: bytes) -> str:
        async with guard(self.connection.url):
            event_id = await self._append(args=self._append_args(stream_id, frame))
        return event_id.decode("ascii") if isinstance(event_id, bytes) else str(event_id)

    async def deliver(
        self, stream_id: str, key: str, frame: bytes, claim: bool
    ) -> tuple[str, bool]:
        """As `InMemoryEventStore.deliver`: one round trip, atomic."""
        return (await self.deliver_many([(stream_id, key, frame, claim)]))[0]

    async def deliver_many(self, items: Sequence[Delivery]) -> list[tuple[str, bool]]:
        """`deliver` each of `items`, in order, all in one round trip (a pipeline of
        EVALSHA; a Redis that lost the script gets it, and the batch again, which its
        dedup keys make harmless)."""
        client = self.connection.client
        for attempt in range(2):
            pipe = client.pipeline(transaction=False)
            for stream_id, key, frame, claim in items:
                args = [*self._append_args(stream_id, frame), key, "1" if claim else "0"]
                pipe.execute_command("EVALSHA", self._deliver.sha, 0, *args)
            async with guard(self.connection.url):
                done = await pipe.execute(raise_on_error=False)
                if attempt == 0 and any(isinstance(d, rex.NoScriptError) for d in done):
                    await client.script_load(_DELIVER)
                    continue
            break
        for d in done:
            if isinstance(d, Exception):
                raise d
        return [(bytes(event_id).decode("ascii"), bool(claimed)) for event_id, claimed in done]

    async def claim(
        self, stream_id: str, after: str | None = None
    ) -> list[tuple[str, bytes]] | None:
        """As `InMemoryEventStore.claim`: one round trip, atomic."""
        key, number = "", ""
        if after is not None:
            key, _, number = after.rpartition(".")
            if not key or not number.isdigit() or len(number) > 18:
                return None
        args: list[_Arg] = [self.connection.prefix, stream_id, number, key]
        args += [repr(self.clock()), repr(self.ttl)]
        async with guard(self.connection.url):
            found = await self._claim(args=args)
        if not isinstance(found, list):
            return None
        if not found:
            return []
        stream_key, first, *frames = found
        seq, prefix = int(first), bytes(stream_key).decode("ascii")
        return [(f"{prefix}.{seq + i}", bytes(frame)) for i, frame in enumerate(frames)]

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
