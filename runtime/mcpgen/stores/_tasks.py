"""The in-memory task store: task records of one process, bounded, expiring by ttl.

Records are kept encoded (msgpack), as a shared store keeps them: what `get` returns is
a copy nobody else holds, and a state that does not encode fails at `put`, here as it
would against Redis. A record that says a task ended is never written over (`put`
refuses and gives it back).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from mcpgen.stores._interfaces import TaskState

__all__ = ["InMemoryTaskStore"]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskState).decode
_RUNNING = frozenset({"working", "input_required"})
_ENDED = frozenset({"completed", "failed", "cancelled"})


class InMemoryTaskStore:
    """A `TaskStore` in a dict. `clock` gives seconds since the epoch (tests inject
    one); a record is gone `ttl_ms` after its `created_ms`. Past `max_tasks` records
    the expired ones are dropped, then the oldest of the creating client's own (so a
    client piling up tasks pushes out its own records first), then the oldest.
    Running tasks count against their client (`create`) until a record says they
    ended, or the record goes."""

    def __init__(self, *, clock: Callable[[], float] = time.time, max_tasks: int = 10_000) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.clock = clock
        self.max_tasks = max_tasks
        self._records: dict[str, tuple[float, bytes]] = {}  # id -> (expires in ms, record)
        self._client_of: dict[str, str] = {}  # id -> the client that created it
        self._running: dict[str, set[str]] = {}  # client -> its running tasks' ids

    async def create(
        self, state: TaskState, *, client: str | None = None, most: int | None = None
    ) -> bool:
        key = client or ""
        mine = self._running.get(key)
        if mine and most is not None:
            now = self.clock() * 1000
            for task_id in [i for i in mine if now >= self._records[i][0]]:
                self._forget(task_id)
            if len(mine) >= most:
                return False
        if state.id not in self._records and len(self._records) >= self.max_tasks:
            self._make_room(key)
        await self.put(state)
        self._client_of[state.id] = key
        if state.status in _RUNNING:
            self._running.setdefault(key, set()).add(state.id)
        return True

    async def put(self, state: TaskState) -> TaskState | None:
        expires = float("inf") if state.ttl_ms is None else state.created_ms + state.ttl_ms
        data = _encode(state)
        records = self._records
        found = records.get(state.id)
        if found is not None and self.clock() * 1000 < found[0]:
            before = _decode(found[1])
            if before.status in _ENDED:
                return before  # the task ended: its record stays as it is
        if state.id not in records and len(records) >= self.max_tasks:
            self._make_room(None)
        records[state.id] = (expires, data)
        key = self._client_of.get(state.id)
        if key is not None and state.status not in _RUNNING:
            self._uncount(key, state.id)
        return None

    async def get(self, task_id: str) -> TaskState | None:
        found = self._records.get(task_id)
        if found is None:
            return None
        if self.clock() * 1000 >= found[0]:
            self._forget(task_id)
            return None
        return _decode(found[1])

    async def delete(self, task_id: str) -> None:
        self._forget(task_id)

    def __len__(self) -> int:
        return len(self._records)

    def _forget(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        key = self._client_of.pop(task_id, None)
        if key is not None:
            self._uncount(key, task_id)

    def _uncount(self, key: str, task_id: str) -> None:
        mine = self._running.get(key)
        if mine is not None:
            mine.discard(task_id)
            if not mine:
                del self._running[key]

    def _make_room(self, client: str | None) -> None:
        now = self.clock() * 1000
        records = self._records
        for task_id in [i for i, (expires, _) in records.items() if now >= expires]:
            self._forget(task_id)
        if client is not None and len(records) >= self.max_tasks:
            owned = self._client_of
            for task_id in [i for i in records if owned.get(i) == client]:  # oldest first
                self._forget(task_id)
                if len(records) < self.max_tasks:
                    return
        while len(records) >= self.max_tasks:
            self._forget(next(iter(records)))  # insertion order: the oldest first
