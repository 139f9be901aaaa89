"""Task records in Redis: the `TaskStore` every worker shares, with leases.

`t:<id>` holds the msgpack-encoded `TaskState`, expiring `ttl_ms` after the task's
creation (by the store's clock; Redis's own expiry follows it). A task that is still
running (working or input_required) also has a lease, `t-lease:<id>`, which the worker
that last wrote it as running renews every `lease / 3` seconds while it holds it. A
worker that dies stops renewing; once its lease has run out, the next `get` on any
worker fails the task with a clear error and stores that, so no task stays "working"
forever. A record that says a task is over, written by any worker, turns its lease
into a tombstone (`done`, kept as long as the record): the owner's next renewal sees
it and stops renewing. A lease that ran out while Redis was away is renewed again.

Running tasks count against their client (`create`): `t-run:<client>` holds the ids of
the client's tasks; one counts while its lease is live (not `done`, not run out), so a
task that ended, expired or lost its worker stops counting without anyone tidying up.
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
from mcpgen.stores.redis._base import Connection, guard

__all__ = ["LEASE_LOST", "RedisTaskStore"]

log = logging.getLogger("mcpgen.stores")
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskState).decode
_RUNNING = frozenset({"working", "input_required"})
LEASE_LOST = -32603  # the JSON-RPC code of a task failed because its worker went away
"""The JSON-RPC error code of a task failed because the worker running it went away
(its lease ran out without being renewed)."""
_DONE = b"done"

# KEYS: (lease, record) pairs; ARGV[1]: the lease in ms. Returns, per pair, 0 when
# the task is over or gone (stop renewing), else 1.
_RENEW = """
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == 'done' or redis.call('EXISTS', KEYS[i + 1]) == 0 then
    table.insert(out, 0)
  else
    redis.call('SET', KEYS[i], '1', 'PX', ARGV[1])
    table.insert(out, 1)
  end
end
return out
"""


# KEYS: the record, its lease, the client's set; ARGV: data, ms left (0: no ttl), the
# lease in ms, most (0: no bound), the lease keys' prefix, id. Returns 1 when stored.
_CREATE = """
local run, most, left = KEYS[3], tonumber(ARGV[4]), tonumber(ARGV[2])
if most > 0 then
  local count = 0
  for _, id in ipairs(redis.call('SMEMBERS', run)) do
    local lease = redis.call('GET', ARGV[5] .. id)
    if lease and lease ~= 'done' then count = count + 1 else redis.call('SREM', run, id) end
  end
  if count >= most then return 0 end
end
if left > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', left)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
local existed = redis.call('EXISTS', run)
redis.call('SADD', run, ARGV[6])
if left == 0 then
  redis.call('PERSIST', run)
else
  local pttl = redis.call('PTTL', run)
  if existed == 0 or (pttl >= 0 and pttl < left) then redis.call('PEXPIRE', run, left) end
end
return 1
"""


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
        self._key = connection.prefix + "t:"
        self._lease_key = connection.prefix + "t-lease:"
        self._run_key = connection.prefix + "t-run:"  # + client: its tasks' ids
        self._held: set[str] = set()  # running tasks whose lease this worker renews
        self._renewer: asyncio.Task[None] | None = None
        self._renew_script = connection.client.register_script(_RENEW)
        self._create_script = connection.client.register_script(_CREATE)

    async def create(
        self, state: TaskState, *, client: str | None = None, most: int | None = None
    ) -> bool:
        if state.status not in _RUNNING:
            await self.put(state)
            return True
        left = 0
        if state.ttl_ms is not None:
            left = max(1, state.created_ms + state.ttl_ms - int(self.clock() * 1000))
        keys = [self._key + state.id, self._lease_key + state.id, self._run_key + (client or "")]
        args: list[_Arg] = [
            _encode(state),
            left,
            int(self.lease * 1000),
            most or 0,
            self._lease_key,
            state.id,
        ]
        async with guard(self.connection.url):
            stored = await self._create_script(keys=keys, args=args)
        if not stored:
            return False
        self._held.add(state.id)
        self._renew_in_background()
        return True

    async def put(self, state: TaskState) -> None:
        data = _encode(state)
        key, lease_key = self._key + state.id, self._lease_key + state.id
        async with guard(self.connection.url):
            pipe = self.connection.client.pipeline(transaction=True)
            left = None
            if state.ttl_ms is not None:
                left = max(1, state.created_ms + state.ttl_ms - int(self.clock() * 1000))
            pipe.set(key, data, px=left)
            if state.status in _RUNNING:
                pipe.set(lease_key, b"1", px=int(self.lease * 1000))
            else:
                pipe.set(lease_key, _DONE, px=left)
            await pipe.execute()
        if state.status in _RUNNING:
            self._held.add(state.id)
            self._renew_in_background()
        else:
            self._held.discard(state.id)

    async def get(self, task_id: str) -> TaskState | None:
        async with guard(self.connection.url):
            pipe = self.connection.client.pipeline(transaction=False)
            pipe.get(self._key + task_id)
            pipe.get(self._lease_key + task_id)
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
        async with guard(self.connection.url):
            await self.connection.client.delete(self._key + task_id, self._lease_key + task_id)

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
        await self.put(failed)
        return failed

    def _renew_in_background(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        while self._held:
            await asyncio.sleep(self.lease / 3)
            held = list(self._held)
            if not held:
                continue
            keys = [k for i in held for k in (self._lease_key + i, self._key + i)]
            try:
                async with guard(self.connection.url):
                    kept = await self._renew_script(keys=keys, args=[int(self.lease * 1000)])
            except StoreUnavailableError as exc:  # keep trying: Redis may come back in time
                log.warning("cannot renew task leases: %s", exc)
                continue
            for task_id, alive in zip(held, kept, strict=True):
                if not alive:  # another worker wrote it as over (e.g. cancelled it)
                    self._held.discard(task_id)

    async def aclose(self) -> None:
        """Stop renewing (the leases then run out: for tests and shutdown)."""
        self._held.clear()
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
