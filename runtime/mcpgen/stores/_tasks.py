"""The in-memory task store: task records of one process, bounded, expiring by ttl.

Records are kept encoded (msgpack), as a shared store keeps them: what `get` returns is
a copy nobody else holds, and a state that does not encode fails at `put`, here as it
would against Redis.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from mcpgen.stores._interfaces import TaskState

__all__ = ["InMemoryTaskStore"]

_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(TaskState).decode


class InMemoryTaskStore:
    """A `TaskStore` in a dict. `clock` gives seconds since the epoch (tests inject
    one); a record is gone `ttl_ms` after its `created_ms`. Past `max_tasks` records
    the expired ones are dropped, then the oldest."""

    def __init__(self, *, clock: Callable[[], float] = time.time, max_tasks: int = 10_000) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be at least 1")
        self.clock = clock
        self.max_tasks = max_tasks
        self._records: dict[str, tuple[float, bytes]] = {}  # id -> (expires in ms, record)

    async def put(self, state: TaskState) -> None:
        expires = float("inf") if state.ttl_ms is None else state.created_ms + state.ttl_ms
        data = _encode(state)
        records = self._records
        if state.id not in records and len(records) >= self.max_tasks:
            self._make_room()
        records[state.id] = (expires, data)

    async def get(self, task_id: str) -> TaskState | None:
        found = self._records.get(task_id)
        if found is None:
            return None
        if self.clock() * 1000 >= found[0]:
            del self._records[task_id]
            return None
        return _decode(found[1])

    async def delete(self, task_id: str) -> None:
        self._records.pop(task_id, None)

    def __len__(self) -> int:
        return len(self._records)

    def _make_room(self) -> None:
        now = self.clock() * 1000
        records = self._records
        for task_id in [i for i, (expires, _) in records.items() if now >= expires]:
            del records[task_id]
        while len(records) >= self.max_tasks:
            del records[next(iter(records))]  # insertion order: the oldest first
