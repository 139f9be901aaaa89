"""Task records in Redis: the `TaskStore` every worker shares, with leases.

`t:<id>` holds the msgpack-encoded `TaskState`, expiring `ttl_ms` after the task's
creation (by the store's clock; Redis's own expiry follows it). A task that is still
running (working or input_required) also has a lease, `t-lease:<id>`, which the worker
that last wrote it as running renews every `lease / 3` seconds while it holds it. A
worker that dies stops renewing; once its lease has run out, the next `get` on any
worker fails the task with a clear error and stores that, so no task stays "working"
forever. A record that says a task is over is final: a `put` over it writes nothing
and returns it (checked in the write's own script). Written by any worker, it turns
its lease into a tombstone (`done`, kept as long as the record): the owner's next renewal sees
it and stops renewing. A lease that ran out while Redis was away is renewed again.

Running tasks count against their client (`create`): `t-running:<client>` scores the
ids of the client's running tasks by when their leases run out, renewed with them; a
task that ended or was deleted leaves it, one whose worker died stops counting when
its lease would have run out, without anyone tidying up. A task's two keys share a
group, the client's set is in a group of its own (under a Cluster: tasks and clients
spread over the masters).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import msgspec

from mcpgen.stores._interfaces import StoreUnavailableError, TaskState
from mcpgen.stores.redis._base import Arg as _Arg
from mcpgen.stores.redis._base import Connection, Step, guard, pipelined

__all__ = ["LEASE_LOST", "RedisTaskStore"]

log = logging.getLogger("mcpgen.stores")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskState).decode
_RUNNING = frozenset({"working", "input_required"})
LEASE_LOST = -32603  # the JSON-RPC code of a task failed because its worker went away
"""The JSON-RPC error code of a task failed because the worker running it went away
(its lease ran out without being renewed)."""
_DONE = b"done"

# A task's record and lease share a group (`under("t:" + id)`); its lease holds the
# client it counts against ('1' for none) while it runs, `done` once it is over. The
# running tasks of one client are a sorted set in the client's own group,
# `t-running:<client>`, each id scored by when its lease runs out (Redis's clock, ms):
# a task counts while its score is ahead, so one whose worker died stops counting
# when its lease would have run out, without anyone tidying up.

# KEYS: the lease, the record; ARGV: the lease in ms. The lease's client when renewed,
# 0 when the task is over or gone (stop renewing).
_RENEW = """
local held = redis.call('GET', KEYS[1])
if held == 'done' or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
held = held or '1'
redis.call('SET', KEYS[1], held, 'PX', ARGV[1])
return held
"""

_NOW_MS = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
"""

# KEYS: a client's running set; ARGV: the lease in ms, most (0: no bound), the ms the
# set is kept (0: for ever), id. 1 when the task may start (and counts from now on).
_ADMIT = (
    _NOW_MS
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
local most = tonumber(ARGV[2])
if most > 0 and redis.call('ZCARD', KEYS[1]) >= most then return 0 end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[1]), ARGV[4])
local keep = tonumber(ARGV[3])
if keep == 0 then
  redis.call('PERSIST', KEYS[1])
elseif redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 1
"""
)

# KEYS: a client's running set; ARGV: the lease in ms, then ids renewed
_BUMP = (
    _NOW_MS
    + """
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', 'GT', ms + tonumber(ARGV[1]), ARGV[i]) end
return 0
"""
)

# KEYS: the record, the lease; ARGV: data, ms left (0: no ttl), the lease in ms ('':
# the task is over), the client for a new lease ('' to keep the lease's), now in ms (the
# store's clock). The lease's client before (false: none); or, when the stored record
# (not past its ttl) says the task ended, nothing written and {that record}: a final
# status never changes, whoever writes.
_PUT = """
local old = redis.call('GET', KEYS[1])
if old then
  local ok, record = pcall(cmsgpack.unpack, old)
  if ok and type(record) == 'table' then
    local status, ttl = record['status'], tonumber(record['ttl_ms'])
    local live = ttl == nil or tonumber(ARGV[5]) < tonumber(record['created_ms']) + ttl
    if live and (status == 'completed' or status == 'failed' or status == 'cancelled') then
      return {old}
    end
  end
end
local before = redis.call('GET', KEYS[2])
local left = tonumber(ARGV[2])
if left > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', left)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
if ARGV[3] == '' then
  if left > 0 then
    redis.call('SET', KEYS[2], 'done', 'PX', left)
  else
    redis.call('SET', KEYS[2], 'done')
  end
else
  local held = ARGV[4]
  if held == '' then held = before end
  if not held or held == 'done' then held = '1' end
  redis.call('SET', KEYS[2], held, 'PX', ARGV[3])
end
return before
"""

# KEYS: the record, the lease. The lease's client before (false: none).
_DELETE = """
local before = redis.call('GET', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[2])
return before
"""


def _client(held: object) -> str | None:
    """The client a lease counts against (`c:<client>`; None: none, or over)."""
    if not isinstance(held, bytes) or not held.startswith(b"c:"):
        return None
    return held[2:].decode()


class RedisTaskStore:
    """A `TaskStore` on Redis. `clock` gives seconds since the epoch; `lease` is how
    long (real seconds) a running task survives its worker."""

    def __init__(
        self,
        connection: Connection,
        *,
        clock: Callable[[], float] = time.time,
        lease: float = 15.0,
    ) -> None:
        self.connection = connection
        self.clock = clock
        self.lease = lease
        self._under = connection.under
        self._held: set[str] = set()  # running tasks whose lease this worker renews
        self._renewer: asyncio.Task[None] | None = None
        client = connection.client
        self._renew_script = client.register_script(_RENEW)
        self._admit = client.register_script(_ADMIT)
        self._bump = client.register_script(_BUMP)
        self._put = client.register_script(_PUT)
        self._delete = client.register_script(_DELETE)

    def _keys(self, task_id: str) -> list[str]:
        """The record and the lease of `task_id` (one group)."""
        under = self._under("t:" + task_id)
        return [under + "t:" + task_id, under + "t-lease:" + task_id]

    def _running(self, client: str) -> str:
        return self._under("t-run:" + client) + "t-running:" + client

    def _now_ms(self) -> int:
        return int(self.clock() * 1000)

    def _left(self, state: TaskState) -> int:
        """Milliseconds the record has left (0: no ttl)."""
        if state.ttl_ms is None:
            return 0
        return max(1, state.created_ms + state.ttl_ms - int(self.clock() * 1000))

    async def create(
        self, state: TaskState, *, client: str | None = None, most: int | None = None
    ) -> bool:
        if state.status not in _RUNNING:
            await self.put(state)
            return True
        lease_ms, left, who = int(self.lease * 1000), self._left(state), client or ""
        admit: Step = (self._admit, [self._running(who)], [lease_ms, most or 0, left, state.id])
        put: Step = (
            self._put,
            self._keys(state.id),
            [_encode(state), left, lease_ms, "c:" + who, self._now_ms()],
        )
        if not most:  # nothing to refuse: both in one round trip
            await pipelined(self.connection, [admit, put])
        else:
            # The client's count first: a worker that dies between the two leaves an
            # id counting until its lease would have run out, never a task uncounted.
            (admitted,) = await pipelined(self.connection, [admit])
            if not admitted:
                return False
            await pipelined(self.connection, [put])
        self._held.add(state.id)
        self._renew_in_background()
        return True

    async def put(self, state: TaskState) -> TaskState | None:
        running = state.status in _RUNNING
        lease = int(self.lease * 1000) if running else ""
        args: list[_Arg] = [_encode(state), self._left(state), lease, "", self._now_ms()]
        (before,) = await pipelined(self.connection, [(self._put, self._keys(state.id), args)])
        if isinstance(before, list):  # the task had ended: its record, unchanged
            self._held.discard(state.id)
            return _decode(before[0])
        if running:
            self._held.add(state.id)
            self._renew_in_background()
            return None
        self._held.discard(state.id)
        await self._uncount(state.id, before)
        return None

    async def _uncount(self, task_id: str, held: object) -> None:
        """The task no longer runs: out of its client's count (if it had one)."""
        client = _client(held)
        if client is not None:
            zrem: Step = (None, (), ("ZREM", self._running(client), task_id))
            await pipelined(self.connection, [zrem])

    async def get(self, task_id: str) -> TaskState | None:
        record, lease_key = self._keys(task_id)
        async with guard(self.connection.url):
            pipe = self.connection.client.pipeline(transaction=False)
            pipe.get(record)
            pipe.get(lease_key)
            data, lease = await pipe.execute()
        if data is None:
            return None
        state = _decode(data)
        if state.ttl_ms is not None and self.clock() * 1000 >= state.created_ms + state.ttl_ms:
            await self.delete(task_id)
            return None
        if state.status in _RUNNING and lease in (None, _DONE) and task_id not in self._held:
            state = await self._fail_orphan(state)
        return state

    async def delete(self, task_id: str) -> None:
        self._held.discard(task_id)
        (before,) = await pipelined(self.connection, [(self._delete, self._keys(task_id), ())])
        await self._uncount(task_id, before)

    async def _fail_orphan(self, state: TaskState) -> TaskState:
        """The worker running `state` stopped renewing its lease: fail the task."""
        message = f"the worker running this task ({state.owner or 'unknown'}) went away"
        failed = msgspec.structs.replace(
            state,
            status="failed",
            status_message=message,
            input_requests={},
            updated_ms=int(self.clock() * 1000),
            error={"code": LEASE_LOST, "message": message},
        )
        return await self.put(failed) or failed

    def _renew_in_background(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        lease_ms = int(self.lease * 1000)
        while self._held:
            await asyncio.sleep(self.lease / 3)
            held = list(self._held)
            if not held:
                continue
            steps: list[Step] = [
                (self._renew_script, self._keys(i)[::-1], [lease_ms]) for i in held
            ]
            try:
                kept = await pipelined(self.connection, steps)
                counted: dict[str, list[_Arg]] = {}
                for task_id, alive in zip(held, kept, strict=True):
                    if not alive:  # another worker wrote it as over (e.g. cancelled it)
                        self._held.discard(task_id)
                    client = _client(alive)
                    if client is not None:
                        counted.setdefault(client, []).append(task_id)
                bumps: list[Step] = [
                    (self._bump, [self._running(c)], [lease_ms, *ids]) for c, ids in counted.items()
                ]
                if bumps:
                    await pipelined(self.connection, bumps)
            except StoreUnavailableError as exc:  # keep trying: Redis may come back in time
                log.warning("cannot renew task leases: %s", exc)

    async def aclose(self) -> None:
        """Stop renewing (the leases then run out: for tests and shutdown)."""
        self._held.clear()
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
