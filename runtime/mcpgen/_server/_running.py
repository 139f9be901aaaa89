"""A task this worker runs, as the `TaskRunner` keeps it between the handler's runs.

It holds the record as last written, the call and handler that run it, and the state
of its input rounds. It is what `Call.task` names (see `_call.RunningTask`): a handler's
progress becomes the task's status message, written back through its runner.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpgen._server._call import Call
from mcpgen._server._defs import ToolDef
from mcpgen._server._tasks import TERMINAL, Handle
from mcpgen.stores import TaskState

__all__ = ["Runner", "RunningTask"]


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
        self.dirty = self.writing = False  # see TaskRunner._save

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
