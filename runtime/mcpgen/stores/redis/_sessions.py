"""Legacy session state in Redis: the `SessionStore` every worker shares.

Keys (under the connection's prefix): `s:<id>` holds `<version>|<msgpack SessionState>`;
the sorted set `s-used` scores every id by its last use (by the store's clock), which
gives the idle timeout and the least-recently-used bound; `s-ver` counts versions.
Each operation is one Lua script, so one round trip, and atomic: two workers saving
the same session cannot leave a state without its use time. Redis's own expiry
(`idle_timeout`, in real seconds) removes a forgotten session's state even if no
worker sweeps again; the scripts treat an entry whose state is gone as gone.

With a bus (`RedisStores` passes one), each worker also keeps the records it served
(`_cache.SessionCache`, which says how they stay coherent): a request in an existing
session is then answered without a round trip, and a save of an unchanged record
writes nothing. Such a use reaches Redis later, batched with the others, about
`idle_timeout / 10` seconds after it (or sooner, with this worker's next create, so
the least-recently-used bound sees it). A record whose last use Redis holds is older
than half the idle timeout is read from Redis again. So the idle timeout keeps its
meaning: Redis holds a use at most half the timeout old while the record is answered
from a cache, and the exact last use soon after; a session unused for `idle_timeout`
is gone, one used more recently is kept (unless a worker died before writing its
uses back: then it may go up to `idle_timeout / 10` early).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import msgspec
from redis import exceptions as rex

from mcpgen.stores._interfaces import SessionState, StoreUnavailableError
from mcpgen.stores.redis._base import Arg as _Arg
from mcpgen.stores.redis._base import Connection, guard
from mcpgen.stores.redis._bus import RedisBus
from mcpgen.stores.redis._cache import DELETED, SessionCache, Ticket

__all__ = ["RedisSessionStore"]

log = logging.getLogger("mcpgen.stores")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(SessionState).decode
_FAILURES = (rex.RedisError, OSError, TimeoutError)  # in the background: logged, retried
_LINGER = 30.0  # seconds without a cache hit after which the heartbeat stops

# Uses served from a cache, (id, time) pairs from ARGV[first]: recorded where newer.
_USES = """
local function record_uses(used, prefix, ttl, first)
  for i = first, #ARGV, 2 do
    if redis.call('ZADD', used, 'XX', 'GT', 'CH', ARGV[i + 1], ARGV[i]) == 1 then
      redis.call('PEXPIRE', prefix .. ARGV[i], ttl)
    end
  end
end
"""

# A session's client (`create`'s quota): the hash `s-client` maps its id to the client,
# the set `s-q:<client>` holds the client's ids. A session that goes, however it goes,
# leaves both (KEYS[3] is the hash, ARGV[1] the quota sets' prefix, in `forget`).
_FORGET = """
local function forget(clients, qprefix, sid)
  local client = redis.call('HGET', clients, sid)
  if client then
    redis.call('SREM', qprefix .. client, sid)
    redis.call('HDEL', clients, sid)
  end
end
"""

# KEYS: the used set, the version counter, the clients hash; ARGV: prefix, id, now,
# idle, data, most, ttl_ms, channel, client ('': none), quota (0: none), the quota
# sets' prefix, then the uses to record. Returns the version, then the ids it removed.
# Eviction: the creating client's own sessions go first, least recently used first
# (down to quota - 1, then while the store is full); another client's only when it
# has none left.
_CREATE = (
    _USES
    + _FORGET
    + """
local used, prefix, chan, clients = KEYS[1], ARGV[1], ARGV[8], KEYS[3]
local client, quota, qprefix = ARGV[9], tonumber(ARGV[10]), ARGV[11]
record_uses(used, prefix, ARGV[7], 12)
local removed = {0}
local function drop(sid)
  removed[#removed + 1] = sid
  redis.call('DEL', prefix .. sid)
  redis.call('PUBLISH', chan, 'd ' .. sid)
  forget(clients, qprefix, sid)
end
local oldest = tonumber(ARGV[3]) - tonumber(ARGV[4])
local stale = redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. oldest)
for _, sid in ipairs(stale) do drop(sid) end
if #stale > 0 then redis.call('ZREM', used, unpack(stale)) end
local mine = {}
if client ~= '' then
  for _, sid in ipairs(redis.call('SMEMBERS', qprefix .. client)) do
    local seen = redis.call('ZSCORE', used, sid)
    if seen then
      mine[#mine + 1] = {tonumber(seen), sid}
    else
      forget(clients, qprefix, sid)
    end
  end
  table.sort(mine, function(a, b) return a[1] < b[1] end)
end
local next_mine = 1
local function drop_mine()
  local sid = mine[next_mine][2]
  next_mine = next_mine + 1
  redis.call('ZREM', used, sid)
  drop(sid)
end
if quota > 0 then
  while #mine - next_mine + 1 >= quota do drop_mine() end
end
local most = tonumber(ARGV[6])
while redis.call('ZCARD', used) >= most and redis.call('ZCARD', used) > 0 do
  if next_mine <= #mine then
    drop_mine()
  else
    local gone = redis.call('ZPOPMIN', used)
    drop(gone[1])
  end
end
local v = redis.call('INCR', KEYS[2])
redis.call('SET', prefix .. ARGV[2], v .. '|' .. ARGV[5], 'PX', ARGV[7])
redis.call('ZADD', used, ARGV[3], ARGV[2])
if client ~= '' then
  redis.call('SADD', qprefix .. client, ARGV[2])
  redis.call('HSET', clients, ARGV[2], client)
end
redis.call('PUBLISH', chan, 'c ' .. v .. ' ' .. ARGV[2])
removed[1] = v
return removed
"""
)

# KEYS: the used set, the state, the version counter, the clients hash; ARGV: id, now,
# idle, ttl_ms, data ('' for a load), a use not yet recorded (0: none), channel, the
# quota sets' prefix
_TOUCH = (
    _FORGET
    + """
local function gone()
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  redis.call('PUBLISH', ARGV[7], 'd ' .. ARGV[1])
  forget(KEYS[4], ARGV[8], ARGV[1])
  return false
end
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not seen then return false end
seen = math.max(tonumber(seen), tonumber(ARGV[6]))
if tonumber(ARGV[2]) - seen > tonumber(ARGV[3]) then return gone() end
local data = ARGV[5]
if data == '' then
  data = redis.call('GET', KEYS[2])
  if not data then return gone() end
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
else
  local v = redis.call('INCR', KEYS[3])
  data = v .. '|' .. data
  if redis.call('SET', KEYS[2], data, 'XX', 'PX', ARGV[4]) == false then return gone() end
  redis.call('PUBLISH', ARGV[7], 'c ' .. v .. ' ' .. ARGV[1])
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return data
"""
)

# KEYS: the used set, the state, the clients hash; ARGV: id, channel, the quota sets' prefix
_DELETE = (
    _FORGET
    + """
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
local deleted = redis.call('DEL', KEYS[2])
redis.call('PUBLISH', ARGV[2], 'd ' .. ARGV[1])
forget(KEYS[3], ARGV[3], ARGV[1])
if removed == 1 and deleted == 1 then return 1 end
return 0
"""
)

# KEYS: the used set; ARGV: prefix, ttl_ms, then the uses; returns the ids not there
# (also those whose state went behind the stores' back: FLUSHDB, an eviction policy)
_RECORD = (
    _USES
    + """
local gone = {}
for i = 3, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i])
     or redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then
    gone[#gone + 1] = ARGV[i]
  end
end
record_uses(KEYS[1], ARGV[1], ARGV[2], 3)
return gone
"""
)


class RedisSessionStore:
    """Sessions by id in Redis, bounded as the in-memory store is: one unused for
    `idle_timeout` seconds is gone, and creating one past `max_sessions` evicts the
    least recently used, of the creating client's own first (its quota as well:
    `SessionStore.create`). `clock` gives wall-clock seconds (every worker's must agree).

    With `bus`, records this worker served are answered from its memory while they
    are at most `stale_after` seconds behind Redis (0: never); see the module docstring.
    """

    def __init__(
        self,
        connection: Connection,
        *,
        idle_timeout: float = 1800.0,
        max_sessions: int = 100_000,
        clock: Callable[[], float] = time.time,
        bus: RedisBus | None = None,
        stale_after: float = 1.0,
    ) -> None:
        self.connection = connection
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.clock = clock
        self.channel = connection.prefix + "sessions"
        self._prefix = connection.prefix + "s:"
        self._used = connection.prefix + "s-used"
        self._versions = connection.prefix + "s-ver"
        self._clients = connection.prefix + "s-client"  # id -> its client (quotas)
        self._quotas = connection.prefix + "s-q:"  # + client: the client's ids
        self._ttl_ms = str(max(1, int(idle_timeout * 1000)))
        self._within = idle_timeout / 2  # answer from the cache while Redis's use is newer
        client = connection.client
        self._create = client.register_script(_CREATE)
        self._touch = client.register_script(_TOUCH)
        self._delete = client.register_script(_DELETE)
        self._record = client.register_script(_RECORD)
        self.cache: SessionCache | None = None
        self._bus = bus
        self._task: asyncio.Task[None] | None = None
        if bus is not None and stale_after > 0:
            self.cache = SessionCache(stale_after=stale_after, max_entries=max_sessions)
            bus.watch(self.channel, self.cache)

    async def create(
        self, state: SessionState, *, client: str | None = None, quota: int | None = None
    ) -> None:
        data = _encode(state)
        cache, ticket, uses = self.cache, None, {}
        if cache is not None:
            ticket, uses = cache.begin(state.id), cache.take_dirty()
        now = self.clock()
        args: list[_Arg] = [
            self._prefix,
            state.id,
            repr(now),
            repr(self.idle_timeout),
            data,
            self.max_sessions,
            self._ttl_ms,
            self.channel,
            client or "",
            quota or 0,
            self._quotas,
        ]
        for session_id, used in uses.items():
            args += (session_id, repr(used))
        keys = [self._used, self._versions, self._clients]
        try:
            async with guard(self.connection.url):
                version, *removed = await self._create(keys=keys, args=args)
        except BaseException:
            if cache is not None and ticket is not None:
                cache.end(state.id, ticket)
                cache.restore(uses)
            raise
        if cache is not None and ticket is not None:
            cache.end(state.id, ticket, int(version), data, now)
            cache.written(uses, [raw.decode() for raw in removed])  # (at once: ours)
            self._keep_fresh()

    async def load(self, session_id: str) -> SessionState | None:
        cache = self.cache
        if cache is not None:
            data = cache.hit(session_id, self.clock(), self._within)
            if data is not None:
                return _decode(data)
        found = await self._run(session_id, b"")
        return None if found is None else _decode(found)

    async def save(self, state: SessionState) -> None:
        data = _encode(state)
        cache = self.cache
        if cache is not None and cache.hit(state.id, self.clock(), self._within) == data:
            return  # unchanged: the use is written back with the others
        await self._run(state.id, data)

    async def delete(self, session_id: str) -> bool:
        cache = self.cache
        ticket: Ticket | None = None
        if cache is not None:
            cache.forget(session_id)
            ticket = cache.begin(session_id)
        keys = [self._used, self._prefix + session_id, self._clients]
        try:
            async with guard(self.connection.url):
                args = [session_id, self.channel, self._quotas]
                removed = await self._delete(keys=keys, args=args)
        finally:
            if cache is not None and ticket is not None:
                cache.end(session_id, ticket, DELETED)
        return bool(removed)

    async def _run(self, session_id: str, data: bytes) -> bytes | None:
        """Load (`data` empty) or save, by one script; the state as stored, or None."""
        cache, ticket, known = self.cache, None, 0.0
        if cache is not None:
            ticket, known = cache.begin(session_id), cache.dirty.pop(session_id, 0.0)
        now = self.clock()
        keys = [self._used, self._prefix + session_id, self._versions, self._clients]
        args: list[_Arg] = [
            session_id,
            repr(now),
            repr(self.idle_timeout),
            self._ttl_ms,
            data,
            repr(known),
            self.channel,
            self._quotas,
        ]
        try:
            async with guard(self.connection.url):
                found = await self._touch(keys=keys, args=args)
        except BaseException:
            if cache is not None and ticket is not None:
                cache.end(session_id, ticket)
                if known:
                    cache.restore({session_id: known})
            raise
        if not isinstance(found, bytes):
            if cache is not None and ticket is not None:
                cache.end(session_id, ticket)
                cache.forget(session_id)
            return None
        number, _, state = found.partition(b"|")
        if cache is not None and ticket is not None:
            cache.end(session_id, ticket, int(number), state, now)
            self._keep_fresh()
        return state

    # -- the cache's upkeep: heartbeats and uses written back, off the request path ---------
    def _keep_fresh(self) -> None:
        task, loop = self._task, asyncio.get_running_loop()
        if task is None or task.done() or task.get_loop() is not loop:
            assert self._bus is not None
            self._bus.start()
            self._task = loop.create_task(self._upkeep())

    async def ready(self) -> None:
        """Wait until records this worker holds may be answered from its memory (the
        first heartbeat is back); at once without a cache."""
        cache = self.cache
        if cache is None:
            return
        cache.last_hit = cache.monotonic()
        self._keep_fresh()
        deadline = cache.monotonic() + 5 * self.connection.timeout
        while cache.monotonic() >= cache.fresh_until:
            if cache.monotonic() > deadline:
                raise StoreUnavailableError("the session cache got no heartbeat back")
            await asyncio.sleep(0.005)

    async def _upkeep(self) -> None:
        cache = self.cache
        assert cache is not None
        assert self._bus is not None
        client = self.connection.client
        every = min(cache.stale_after / 4, self.idle_timeout / 10)
        written = cache.monotonic()
        await self._bus.ready()
        while True:
            mono = cache.monotonic()
            if cache.dirty and mono - written >= self.idle_timeout / 10:
                written = mono
                await self._write_uses(cache)
            if mono - cache.last_hit > _LINGER and not cache.dirty:
                return  # nobody asks: no heartbeats (the next read from Redis restarts them)
            with contextlib.suppress(*_FAILURES):
                await client.publish(self.channel, cache.heartbeat())
            await asyncio.sleep(every)

    async def _write_uses(self, cache: SessionCache) -> None:
        uses = cache.take_dirty()
        args: list[_Arg] = [self._prefix, self._ttl_ms]
        for session_id, used in uses.items():
            args += (session_id, repr(used))
        try:
            gone = await self._record(keys=[self._used], args=args)
        except _FAILURES as exc:
            log.warning("session uses not written (retrying): %s", exc)
            cache.restore(uses)
            return
        cache.written(uses, [raw.decode() for raw in gone])

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
