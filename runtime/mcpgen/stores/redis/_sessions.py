"""Legacy session state in Redis: the `SessionStore` every worker shares.

Each session is a hash of its own (`session:<id>`, under a Cluster in a hash slot of
its own: sessions spread over the masters) holding its version, last use (by the
store's clock), state and client. The indexes that span sessions share one group: the
sorted set `s-lru` scores every id by its last use (the sweep of idle sessions and
the least-recently-used bound), `s-owner` and `s-quota:<client>` hold the quotas. A
load or save is one Lua script on the session and a `ZADD` on the index, pipelined:
one round trip. Redis's own expiry (`idle_timeout`, in real seconds) removes a
forgotten session even if no worker sweeps again. The two groups are written apart
(under a Cluster, on different masters): the session is the truth about being there
and idle, the index only chooses what a create evicts and what a quota counts, and
an index entry whose session is gone counts as gone.

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
from typing import Any

import msgspec
from redis import exceptions as rex

from mcpgen.stores._interfaces import SessionState, StoreUnavailableError
from mcpgen.stores.redis._base import BUS, Connection, Step, pipelined
from mcpgen.stores.redis._base import Arg as _Arg
from mcpgen.stores.redis._bus import RedisBus
from mcpgen.stores.redis._cache import DELETED, SessionCache, Ticket
from mcpgen.stores.redis._removals import Acknowledger, removing

__all__ = ["RedisSessionStore"]

log = logging.getLogger("mcpgen.stores")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(SessionState).decode
_FAILURES = (rex.RedisError, OSError, TimeoutError)  # in the background: logged, retried
_LINGER = 30.0  # seconds without a cache hit after which the heartbeat stops

# A session is a hash in a group of its own (`under("s:" + id)`): `v` its version, `u`
# its last use (store clock), `d` the msgpack state, `c` its client ('' for none). The
# indexes that span sessions live in one group, `under("s")`: the sorted set `s-lru` of
# ids by last use (the idle sweep and the least-recently-used bound), the hash `s-owner`
# (id -> client) and one set per client, `s-quota:<client>` (the quotas). A script
# touches one group only; the store runs a session's script and its index's command in
# one pipeline (one round trip).

# KEYS: the session; ARGV: id, now, idle, ttl_ms, data ('' for a load), a use not yet
# recorded (0: none), channel ('' to publish nothing). Returns `<version>|<state>`, or
# false when the session is gone (idle past the timeout: then it is deleted).
_TOUCH = """
local held = redis.call('HMGET', KEYS[1], 'v', 'u', 'd')
if not held[1] then return false end
local seen = math.max(tonumber(held[2]), tonumber(ARGV[6]))
if tonumber(ARGV[2]) - seen > tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
  if ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[7], 'd ' .. ARGV[1]) end
  return false
end
local v, data = held[1], ARGV[5]
if data == '' then
  data = held[3]
  redis.call('HSET', KEYS[1], 'u', ARGV[2])
else
  v = redis.call('HINCRBY', KEYS[1], 'v', 1)
  redis.call('HSET', KEYS[1], 'u', ARGV[2], 'd', data)
  if ARGV[7] ~= '' then redis.call('PUBLISH', ARGV[7], 'c ' .. v .. ' ' .. ARGV[1]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return v .. '|' .. data
"""

# KEYS: the session; ARGV: now, ttl_ms, data, client, channel, id
_CREATE = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', 1, 'u', ARGV[1], 'd', ARGV[3], 'c', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], 'c 1 ' .. ARGV[6]) end
return 1
"""

# KEYS: the session; ARGV: a use, ttl_ms. 1 when recorded, 0 when the session is gone.
_USE = """
local seen = redis.call('HGET', KEYS[1], 'u')
if not seen then return 0 end
if tonumber(ARGV[1]) > tonumber(seen) then redis.call('HSET', KEYS[1], 'u', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: the session; ARGV: id, channel, unless used since (a time; '' for always).
# 1 when it was there and is deleted now.
_DROP = """
if ARGV[3] ~= '' then
  local seen = redis.call('HGET', KEYS[1], 'u')
  if seen and tonumber(seen) >= tonumber(ARGV[3]) then return 0 end
end
local deleted = redis.call('DEL', KEYS[1])
if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2], 'd ' .. ARGV[1]) end
return deleted
"""

_FORGET_FN = """
local function forget(owners, qprefix, sid)
  local client = redis.call('HGET', owners, sid)
  if client then
    redis.call('SREM', qprefix .. client, sid)
    redis.call('HDEL', owners, sid)
  end
end
"""

# KEYS: the lru set, the owners hash; ARGV: the quota sets' prefix, then ids: they are
# gone, out of the indexes
_FORGET = (
    _FORGET_FN
    + """
for i = 2, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  forget(KEYS[2], ARGV[1], ARGV[i])
end
return 0
"""
)

# KEYS: the lru set, the owners hash; ARGV: id, now, idle, most, client ('': none),
# quota (0: none), the quota sets' prefix, then (id, use) pairs to record. Returns two
# lists: the ids idle past the timeout, and those evicted; both are out of the indexes,
# the store deletes their sessions. Eviction: the creating client's own sessions go
# first, least recently used first (down to quota - 1, then while the store is full);
# another client's only when it has none left.
_ADMIT = (
    _FORGET_FN
    + """
local used, owners, qprefix = KEYS[1], KEYS[2], ARGV[7]
local client, quota, most = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[4])
for i = 8, #ARGV, 2 do redis.call('ZADD', used, 'XX', 'GT', ARGV[i + 1], ARGV[i]) end
local oldest = tonumber(ARGV[2]) - tonumber(ARGV[3])
local stale = redis.call('ZRANGEBYSCORE', used, '-inf', '(' .. oldest)
for _, sid in ipairs(stale) do forget(owners, qprefix, sid) end
if #stale > 0 then redis.call('ZREM', used, unpack(stale)) end
local evicted = {}
local function evict(sid)
  evicted[#evicted + 1] = sid
  redis.call('ZREM', used, sid)
  forget(owners, qprefix, sid)
end
local mine = {}
if client ~= '' then
  for _, sid in ipairs(redis.call('SMEMBERS', qprefix .. client)) do
    local seen = redis.call('ZSCORE', used, sid)
    if seen then mine[#mine + 1] = {tonumber(seen), sid} else forget(owners, qprefix, sid) end
  end
  table.sort(mine, function(a, b) return a[1] < b[1] end)
end
local next_mine = 1
if quota > 0 then
  while #mine - next_mine + 1 >= quota do
    evict(mine[next_mine][2])
    next_mine = next_mine + 1
  end
end
while redis.call('ZCARD', used) >= most and redis.call('ZCARD', used) > 0 do
  if next_mine <= #mine then
    evict(mine[next_mine][2])
    next_mine = next_mine + 1
  else
    evict(redis.call('ZRANGE', used, 0, 0)[1])
  end
end
redis.call('ZADD', used, ARGV[2], ARGV[1])
if client ~= '' then
  redis.call('SADD', qprefix .. client, ARGV[1])
  redis.call('HSET', owners, ARGV[1], client)
end
return {stale, evicted}
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
        self.channel = connection.under(BUS) + "sessions"
        self._under = connection.under
        index = connection.under("s")
        self._used = index + "s-lru"
        self._owners = index + "s-owner"  # id -> its client (quotas)
        self._quotas = index + "s-quota:"  # + client: the client's ids
        self._ttl_ms = str(max(1, int(idle_timeout * 1000)))
        self._within = idle_timeout / 2  # answer from the cache while Redis's use is newer
        client = connection.client
        self._create = client.register_script(_CREATE)
        self._touch = client.register_script(_TOUCH)
        self._use = client.register_script(_USE)
        self._drop = client.register_script(_DROP)
        self._forget = client.register_script(_FORGET)
        self._admit = client.register_script(_ADMIT)
        self.cache: SessionCache | None = None
        self._bus = bus
        self._task: asyncio.Task[None] | None = None
        self._lost_master = False  # a heartbeat failed: the masters may have changed
        if bus is not None and stale_after > 0:
            self.cache = SessionCache(stale_after=stale_after, max_entries=max_sessions)
            self.cache.acknowledge = Acknowledger(client, self.channel, self.cache.nonce)
            bus.watch(self.channel, self.cache)
        self._news = self.channel

    def _key(self, session_id: str) -> str:
        return self._under("s:" + session_id) + "session:" + session_id

    def _uses(self, uses: dict[str, float]) -> list[Step]:
        """The steps recording `uses` on the sessions (the index gets them apart)."""
        return [
            (self._use, [self._key(sid)], [repr(used), self._ttl_ms]) for sid, used in uses.items()
        ]

    async def create(
        self, state: SessionState, *, client: str | None = None, quota: int | None = None
    ) -> None:
        data = _encode(state)
        cache, ticket, uses = self.cache, None, {}
        if cache is not None:
            ticket, uses = cache.begin(state.id), cache.take_dirty()
        now = self.clock()
        made: list[_Arg] = [repr(now), self._ttl_ms, data, client or "", self._news, state.id]
        admit: list[_Arg] = [state.id, repr(now), repr(self.idle_timeout), self.max_sessions]
        admit += [client or "", quota or 0, self._quotas]
        for session_id, used in uses.items():
            admit += (session_id, repr(used))
        steps: list[Step] = [
            (self._create, [self._key(state.id)], made),
            (self._admit, [self._used, self._owners], admit),
            *self._uses(uses),
        ]
        try:
            _, (stale, evicted), *recorded = await pipelined(self.connection, steps)
            removed = [raw.decode() for raw in evicted]
            drops: list[Step] = [
                (self._drop, [self._key(sid)], [sid, self._news, ""]) for sid in removed
            ]
            since = repr(now - self.idle_timeout)
            for raw in stale:
                sid = raw.decode()
                drops.append((self._drop, [self._key(sid)], [sid, self._news, since]))
            if drops:
                await removing(self.cache, removed, pipelined(self.connection, drops))
        except BaseException:
            if cache is not None and ticket is not None:
                cache.end(state.id, ticket)
                cache.restore(uses)
            raise
        if cache is not None and ticket is not None:
            gone = [sid for sid, kept in zip(uses, recorded, strict=True) if not kept]
            cache.end(state.id, ticket, 1, data, now)
            cache.written(uses, removed + [raw.decode() for raw in stale] + gone)
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
        """Returns once no worker answers the session from its cache (`_removals`)."""
        cache = self.cache
        ticket: Ticket | None = None
        if cache is not None:
            cache.forget(session_id)
            ticket = cache.begin(session_id)
        steps: list[Step] = [
            (self._drop, [self._key(session_id)], [session_id, self._news, ""]),
            (self._forget, [self._used, self._owners], [self._quotas, session_id]),
        ]
        try:
            removed, _ = await removing(self.cache, [session_id], pipelined(self.connection, steps))
        finally:
            if cache is not None and ticket is not None:
                cache.end(session_id, ticket, DELETED)
        return bool(removed)

    async def _run(self, session_id: str, data: bytes) -> bytes | None:
        """Load (`data` empty) or save, by one script and the index's use, in one round
        trip; the state as stored, or None."""
        cache, ticket, known = self.cache, None, 0.0
        if cache is not None:
            ticket, known = cache.begin(session_id), cache.dirty.pop(session_id, 0.0)
        now = self.clock()
        args: list[_Arg] = [session_id, repr(now), repr(self.idle_timeout), self._ttl_ms]
        args += [data, repr(known), self._news]
        steps: list[Step] = [
            (self._touch, [self._key(session_id)], args),
            (None, (), ("ZADD", self._used, "XX", "GT", repr(now), session_id)),
        ]
        try:
            # The index's use may fail alone (its master failing over): the session
            # is still served, and its use reaches the index with the next one.
            found, _ = await pipelined(self.connection, steps, optional=1)
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
            with contextlib.suppress(StoreUnavailableError):  # (the next create sweeps it)
                args = [self._quotas, session_id]
                await pipelined(self.connection, [(self._forget, [self._used, self._owners], args)])
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
            await self._beat(cache)
            await asyncio.sleep(every)

    async def _beat(self, cache: SessionCache) -> None:
        """A heartbeat; under a spread Cluster one through each master (the news of
        a session comes from its own master: see `_cache`)."""
        client: Any = self.connection.client
        if not self.connection.spread:
            with contextlib.suppress(*_FAILURES):
                await client.publish(self.channel, cache.heartbeat())
            return
        try:
            await client.initialize()
            if self._lost_master:  # ask the cluster again: a replica may have taken over
                self._lost_master = False
                await client.nodes_manager.initialize()
            primaries = client.get_primaries()
            cache.expect(frozenset(node.name for node in primaries))
            for node in primaries:
                beat = cache.heartbeat(node.name)
                await client.execute_command("PUBLISH", self.channel, beat, target_nodes=node)
        except (*_FAILURES, rex.RedisClusterException):
            self._lost_master = True

    async def _write_uses(self, cache: SessionCache) -> None:
        uses = cache.take_dirty()
        index: list[_Arg] = ["ZADD", self._used, "XX", "GT"]
        for session_id, used in uses.items():
            index += (repr(used), session_id)
        try:
            _, *kept = await pipelined(self.connection, [(None, (), index), *self._uses(uses)])
        except (*_FAILURES, StoreUnavailableError) as exc:
            log.warning("session uses not written (retrying): %s", exc)
            cache.restore(uses)
            return
        cache.written(uses, [sid for sid, alive in zip(uses, kept, strict=True) if not alive])

    async def aclose(self) -> None:
        if self.cache is not None and isinstance(self.cache.acknowledge, Acknowledger):
            await self.cache.acknowledge.aclose()
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
