"""The events of resumable SSE streams in Redis: the `EventStore` every worker shares,
so a client may resume with `Last-Event-ID` on whichever worker it reaches.

An event id is `<stream key>.<sequence number>` as in the in-memory store; the random
stream key finds the stream. Keys (in the bus's group, `Connection.under`): `e-ids` (a
hash: stream id -> stream key), `e-meta:<key>` (a hash: stream id, newest sequence
number, last append time), `e-list:<key>` (the frames, oldest first), `e-used` (a sorted
set of stream keys by last append time, for the ttl and the total bound), `e-total`
(events held in all) and `e-keys:<key>` (the dedup keys of `deliver`, by sequence
number; the claimed mark of `claim` is the field `done` of `e-meta`), and `e-open` (a
hash: log -> `<worker> <bus sequence number>`, the worker that streams the log and the
bus's counter when it began, see `hand_in`). Each operation is one Lua script: one round
trip, atomic.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable, Sequence

from redis import exceptions as rex

from mcpgen.stores._events import Delivery
from mcpgen.stores._interfaces import Replay
from mcpgen.stores.redis._base import BUS, SEQUENCE, Connection, guard
from mcpgen.stores.redis._base import Arg as _Arg

__all__ = ["Handed", "RedisEventStore"]

Handed = tuple[str, str, bytes, bool, int]  # a `Delivery` and its bus sequence number (or 0)
_CHUNK = 100  # items per script: each script holds Redis up for its whole run


def _fresh() -> str:
    return base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")


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

# ARGV: prefix, now, ttl, per stream, total, ttl in ms, the worker handing in ('' for
# none), NUMSUB or SHARDNUMSUB (how the bus subscribes), then six per item: stream id,
# frame, a fresh key, the event's dedup key, the mode and the bus sequence number.
# Mode '1' claims the event, '0' keeps it, 's' keeps it unless another worker that is
# still subscribed streams the log and registered before the event was published (it
# hands the event in itself). The dedup keys of a stream live in a sorted set by
# sequence number, bounded as the stream is.
_DELIVER = (
    _APPEND_FN
    + """
local function deliver(p, sid, frame, now_s, ttl, per, most, fresh, ttl_ms, dk, claim)
  local key = redis.call('HGET', p .. 'e-ids', sid)
  local seq = key and redis.call('ZSCORE', p .. 'e-keys:' .. key, dk)
  if seq then
    seq = tonumber(seq)
  else
    key, seq = append(p, sid, frame, now_s, ttl, per, most, fresh, ttl_ms)
    local keys = p .. 'e-keys:' .. key
    redis.call('ZADD', keys, seq, dk)
    redis.call('ZREMRANGEBYRANK', keys, 0, -1 - tonumber(per))
    redis.call('PEXPIRE', keys, ttl_ms)
  end
  local claimed = 0
  if claim then
    local meta = p .. 'e-meta:' .. key
    if seq > tonumber(redis.call('HGET', meta, 'done') or '0') then
      redis.call('HSET', meta, 'done', seq)
      claimed = 1
    end
  end
  return {key .. '.' .. seq, claimed}
end

local p, me = ARGV[1], ARGV[7]
local open, alive = p .. 'e-open', {}
local function elsewhere(sid, number)
  local held = redis.call('HGET', open, sid)
  if not held then return false end
  local w, since = string.match(held, '^(%S+) (%d+)$')
  if not w or w == me or tonumber(since) >= number then return false end
  if alive[w] == nil then
    alive[w] = redis.call('PUBSUB', ARGV[8], p .. 'w:' .. w)[2] > 0
  end
  if not alive[w] then redis.call('HDEL', open, sid) end
  return alive[w]
end
local out = {}
for i = 9, #ARGV, 6 do
  local sid, mode = ARGV[i], ARGV[i + 4]
  if mode == 's' and elsewhere(sid, tonumber(ARGV[i + 5])) then
    table.insert(out, {'', 0})
  else
    table.insert(out, deliver(p, sid, ARGV[i + 1], ARGV[2], ARGV[3], ARGV[4], ARGV[5],
                              ARGV[i + 2], ARGV[6], ARGV[i + 3], mode == '1'))
  end
end
return out
"""
)

# ARGV: prefix, stream id, after (a sequence number, or '' for the claimed mark), the
# key `after` was issued under (or ''), now, ttl, the worker that will stream the log
# from now on ('' for none), the bus's counter (under the prefix), then '1' to prime
# ('' not to), per stream, total, a fresh key, ttl in ms. Priming, when none of the
# frames to return has data, appends an empty frame, claimed, and returns it alone.
_CLAIM = (
    _APPEND_FN
    + """
local p, sid, after = ARGV[1], ARGV[2], ARGV[3]
if ARGV[7] ~= '' then
  local since = redis.call('GET', p .. ARGV[8]) or '0'
  redis.call('HSET', p .. 'e-open', sid, ARGV[7] .. ' ' .. since)
end
local out, data = {}, false
local key = redis.call('HGET', p .. 'e-ids', sid)
local meta = key and redis.call('HMGET', p .. 'e-meta:' .. key, 'last', 'touched', 'done')
if key and (not meta[1] or tonumber(ARGV[5]) - tonumber(meta[2]) > tonumber(ARGV[6])) then
  drop(p, key)
  key = nil
end
if key then
  local list = p .. 'e-list:' .. key
  local last, done = tonumber(meta[1]), tonumber(meta[3] or '0')
  local oldest = last - redis.call('LLEN', list) + 1
  local start = done
  if after ~= '' then
    start = tonumber(after)
    if ARGV[4] ~= key or start < oldest - 1 or start > last then return false end
  end
  if last > done then redis.call('HSET', p .. 'e-meta:' .. key, 'done', last) end
  local first = math.max(start + 1, oldest)
  out = {key, tostring(first)}
  for _, frame in ipairs(redis.call('LRANGE', list, first - oldest, -1)) do
    table.insert(out, frame)
    data = data or frame ~= ''
  end
elseif after ~= '' then
  return false
end
if ARGV[9] == '1' and not data then
  local k, seq = append(p, sid, '', ARGV[5], ARGV[6], ARGV[10], ARGV[11], ARGV[12], ARGV[13])
  redis.call('HSET', p .. 'e-meta:' .. k, 'done', seq)
  out = {k, tostring(seq), ''}
end
return out
"""
)

# ARGV: prefix, stream id, worker: forget that the worker streams the log
_RELEASE = """
local open = ARGV[1] .. 'e-open'
local held = redis.call('HGET', open, ARGV[2])
if held and string.sub(held, 1, #ARGV[3] + 1) == ARGV[3] .. ' ' then
  redis.call('HDEL', open, ARGV[2])
end
return 0
"""

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
        self._release = client.register_script(_RELEASE)
        self._ttl_ms = max(1, int(ttl * 1000))
        # Every key is in the bus's group (one slot under a Cluster: the total bound and
        # LRU across streams, and the check that a worker still listens on the bus, need
        # them together). Every script names one key (the scripts find the others from
        # `_under`): it routes the script to the node of that slot.
        self._under = connection.under(BUS)
        self._route = [self._under + "e-ids"]
        self._numsub = "SHARDNUMSUB" if connection.spread else "NUMSUB"  # (as `RedisBus`)

    def _append_args(self, stream_id: str, frame: bytes) -> list[_Arg]:
        return [
            self._under,
            stream_id,
            frame,
            repr(self.clock()),
            repr(self.ttl),
            self.max_per_stream,
            self.max_events,
            _fresh(),
            self._ttl_ms,
        ]

    async def append(self, stream_id: str, frame: bytes) -> str:
        async with guard(self.connection.url):
            args = self._append_args(stream_id, frame)
            event_id = await self._append(keys=self._route, args=args)
        return event_id.decode("ascii") if isinstance(event_id, bytes) else str(event_id)

    async def deliver(
        self, stream_id: str, key: str, frame: bytes, claim: bool
    ) -> tuple[str, bool]:
        """As `InMemoryEventStore.deliver`: one round trip, atomic."""
        return (await self.deliver_many([(stream_id, key, frame, claim)]))[0]

    async def deliver_many(self, items: Sequence[Delivery]) -> list[tuple[str, bool]]:
        """`deliver` each of `items`, in order, all in one round trip."""
        done = await self.hand_in([(sid, key, frame, claim, 0) for sid, key, frame, claim in items])
        return [(event_id or "", claimed) for event_id, claimed in done]

    async def hand_in(
        self, items: Sequence[Handed], worker: str = ""
    ) -> list[tuple[str | None, bool]]:
        """`deliver` each of `items`, in order, in one round trip (a pipeline of one
        script per `_CHUNK` items; a Redis that lost the script gets it, and the batch
        again, which the dedup keys make harmless). An item with a bus sequence number
        and no claim is skipped (None) when another worker, still subscribed to the
        bus, streams its log since before that event: that worker hands it in.
        `worker` is the one handing in (`RedisBus.worker`)."""
        client = self.connection.client
        head: list[_Arg] = [self._under, repr(self.clock()), repr(self.ttl)]
        head += [self.max_per_stream, self.max_events, self._ttl_ms, worker, self._numsub]
        chunks = []
        for start in range(0, len(items), _CHUNK):
            args = list(head)
            for stream_id, key, frame, claim, sequence in items[start : start + _CHUNK]:
                mode = "1" if claim else "s" if sequence else "0"
                args += [stream_id, frame, _fresh(), key, mode, sequence]
            chunks.append(args)
        for attempt in range(2):
            pipe = client.pipeline(transaction=False)
            for args in chunks:
                pipe.execute_command("EVALSHA", self._deliver.sha, 1, *self._route, *args)
            async with guard(self.connection.url):
                done = await pipe.execute(raise_on_error=False)
                if attempt == 0 and any(isinstance(d, rex.NoScriptError) for d in done):
                    await client.script_load(_DELIVER)
                    continue
            break
        out: list[tuple[str | None, bool]] = []
        for d in done:
            if isinstance(d, Exception):
                raise d
            for event_id, claimed in d:
                out.append((bytes(event_id).decode("ascii") or None, bool(claimed)))
        return out

    async def release(self, stream_id: str, worker: str) -> None:
        """`worker` no longer streams `stream_id` (unless another worker took it over)."""
        async with guard(self.connection.url):
            await self._release(keys=self._route, args=[self._under, stream_id, worker])

    async def claim(
        self, stream_id: str, after: str | None = None, *, worker: str = "", prime: bool = False
    ) -> list[tuple[str, bytes]] | None:
        """As `InMemoryEventStore.claim` (`prime` too): one round trip, atomic. With
        `worker`, it also records that `worker` streams the log from now on: the others
        skip the events published after this (`hand_in`) while it stays subscribed,
        until `release`."""
        key, number = "", ""
        if after is not None:
            key, _, number = after.rpartition(".")
            if not key or not (number.isascii() and number.isdigit()) or len(number) > 18:
                return None
        args: list[_Arg] = [self._under, stream_id, number, key]
        args += [repr(self.clock()), repr(self.ttl), worker, SEQUENCE, "1" if prime else ""]
        args += [self.max_per_stream, self.max_events, _fresh(), self._ttl_ms]
        async with guard(self.connection.url):
            found = await self._claim(keys=self._route, args=args)
        if not isinstance(found, list):
            return None
        if not found:
            return []
        stream_key, first, *frames = found
        seq, prefix = int(first), bytes(stream_key).decode("ascii")
        return [(f"{prefix}.{seq + i}", bytes(frame)) for i, frame in enumerate(frames)]

    async def replay(self, last_event_id: str) -> Replay | None:
        key, _, number = last_event_id.rpartition(".")
        if not key or not (number.isascii() and number.isdigit()) or len(number) > 18:
            return None
        args: list[_Arg] = [self._under, key, number, repr(self.clock()), repr(self.ttl)]
        async with guard(self.connection.url):
            found = await self._replay(keys=self._route, args=args)
        if not isinstance(found, list):
            return None
        stream, first, *frames = found
        seq = int(first)
        events = [(f"{key}.{seq + i}", bytes(frame)) for i, frame in enumerate(frames)]
        return Replay(stream.decode(), events)
