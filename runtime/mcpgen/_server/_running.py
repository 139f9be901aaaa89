"""A task this worker runs, as the `TaskRunner` keeps it between the handler's runs.

It holds the record as last written, the call and handler that run it, and the state
of its input rounds. It is what `Call.task` names (see `_call.RunningTask`): a handler's
progress becomes the task's status message, written back through its runner.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from mcpgen._server._call import Call
from mcpgen._server._defs import ToolDef
from mcpgen._server._tasks import TERMINAL, Handle, Publish
from mcpgen.stores import TaskEvent, TaskState, TaskStore

__all__ = ["Runner", "RunningTask", "write_record"]


class Runner(Protocol):
    """What a running task needs of its runner: the time, and a write soon."""

    def now_ms(self) -> int: ...

    def save_soon(self, live: RunningTask) -> None: ...


class RunningTask:
    """A task this worker runs: its record as last written, and what its runs need."""

    __slots__ = (
        "answers",
        "asked",
        "call",
        "dirty",
        "handle",
        "handler_state",
        "issued",
        "kwargs",
        "news",
        "runner",
        "state",
        "tool",
        "writing",
    )

    def __init__(
        self,
        runner: Runner,
        state: TaskState,
        call: Call,
        tool: ToolDef,
        kwargs: dict[str, Any],
    ) -> None:
        self.runner = runner
        self.state = state
        self.call = call
        self.tool = tool
        self.kwargs = kwargs
        self.handle: Handle | None = None
        self.asked: dict[str, tuple[str, str]] = {}  # wire key -> (handler's key, method)
        self.answers: dict[str, Any] = {}  # this round's typed answers, by handler's key
        self.issued: set[str] = set()  # every wire key ever used (never reused)
        self.handler_state: Any = None  # the handler's MRTR state for its next run
        self.dirty = self.writing = False  # see write_record
        self.news: list[TaskEvent] = []  # status changes to announce once written

    @property
    def id(self) -> str:
        return self.state.id

    def note_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A task reports progress as its status message (it has no stream to notify)."""
        if self.state.status in TERMINAL:
            return
        if message is None:
            message = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        self.state.status_message = message
        self.state.updated_ms = self.runner.now_ms()
        self.runner.save_soon(self)


async def write_record(live: RunningTask, store: TaskStore, publish: Publish) -> TaskState | None:
    """Write the task's record, then announce the status changes it holds. One write per
    task is in flight at a time and the last one carries the newest state, so a slow
    store cannot reorder a task's states; a write asked for meanwhile is made by the
    writer already running. The stored record when the store refused the write (the
    task had ended, e.g. cancelled on another worker): nothing of ours is announced."""
    live.dirty = True
    if live.writing:
        return None
    live.writing = True
    try:
        while live.dirty:
            live.dirty = False
            news, live.news = live.news, []
            stored = await store.put(msgspec.structs.replace(live.state))
            if stored is not None:
                live.news, live.dirty = [], False
                return stored
            for change in news:
                publish(change)
    finally:
        live.writing = False
    return None
