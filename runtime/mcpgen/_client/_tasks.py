"""The client side of the Tasks extension (`io.modelcontextprotocol/tasks`), sans-I/O.

A modern request declares the extension in its own client capabilities; the server
may then answer a `tools/call` with a `CreateTaskResult` (`resultType: "task"`)
instead of the tool's result. The client learns how the task goes from `tasks/get`
(or `notifications/tasks`), answers its input requests with `tasks/update`, and may
`tasks/cancel` it. This module holds what that needs without any I/O: the declaring
capabilities, decoding of the task shapes, the task outcomes as exceptions, and
`TaskWatch`, the pure state of waiting for one task (each observed status in, the
next step out: wait this long, answer these input requests, or the final result).

2025-11-25 sessions had tasks of another kind, in the core protocol: a server offers
them in `capabilities.tasks.requests.tools.call`, lists each tool's
`execution.taskSupport`, and a client asks for one with `params.task` (`{"ttl": ms}`),
getting `{"task": Task}`; `tasks/get` answers the bare `Task`, and `tasks/result` blocks
until the task ends, carrying the server's input requests (ordinary server-to-client
requests) while it waits. `legacy_offered`, `legacy_support`, `legacy_created` and
`legacy_status` read those shapes into the extension's, so one handle serves both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpgen._client._steps import Done, NeedInput, Wait
from mcpgen._errors import McpError, ProtocolViolationError
from mcpgen._protocol import MISSING_CAPABILITY
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = [
    "DEFAULT_POLL",
    "TASKS",
    "TASK_METHODS",
    "LEGACY_TASKS",
    "TaskCancelledError",
    "TaskFailedError",
    "TaskWatch",
    "Wait",
    "created_task",
    "declaring",
    "get_result",
    "legacy_created",
    "legacy_offered",
    "legacy_status",
    "legacy_support",
    "status_of",
    "task_notification",
    "tasks_required",
]

TASKS: Final = x.EXTENSION_ID
TASK_METHODS: Final = frozenset({"tools/call"})  # requests a server may answer with a task
DEFAULT_POLL: Final = 1.0  # seconds between polls when the server suggests no interval
LEGACY_TASKS: Final = "2025-11-25"  # the one revision with core tasks
_get_decoder = msgspec.json.Decoder(x.GetTaskResult)
_ENCODED: Final = (msgspec.Raw, bytes)


class TaskFailedError(McpError):
    """The task failed: the server ended it with a JSON-RPC error (`code`, `message`,
    `data` are that error's). A tool error is not a failure: it completes the task
    with an `isError` result."""

    def __init__(self, task_id: str, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.task_id = task_id

    def __repr__(self) -> str:
        return f"TaskFailedError({self.task_id!r}, {self.code}, {self.message!r})"


class TaskCancelledError(Exception):
    """The task was cancelled (by this client, another one, expiry or the server's
    shutdown) before it produced a result; `message` is its last status message."""

    def __init__(self, task_id: str, message: str | None = None) -> None:
        super().__init__(f"task {task_id!r} was cancelled" + (f": {message}" if message else ""))
        self.task_id = task_id
        self.message = message


# Every shape a task's status comes in.
TaskShape = x.CreateTaskResult | x.GetTaskResult | x.TaskStatusNotificationParams


def status_of(task: TaskShape) -> str:
    """The status of any task shape: a field of CreateTaskResult, the tag of the others."""
    status = getattr(task, "status", None)
    return str(status if status is not None else type(task).__struct_config__.tag)


def declaring(capabilities: dict[str, Any]) -> dict[str, Any]:
    """`capabilities` plus the extension (a new dict; the argument is left alone)."""
    extensions = dict(capabilities.get("extensions") or {})
    extensions.setdefault(TASKS, {})
    return {**capabilities, "extensions": extensions}


def tasks_required(error: McpError) -> bool:
    """Whether a modern server refused a request for not declaring the extension
    (-32021 naming it among the required capabilities)."""
    data = error.data if isinstance(error.data, dict) else {}
    required = data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return error.code == MISSING_CAPABILITY and isinstance(extensions, dict) and TASKS in extensions


def created_task(data: dict[str, Any]) -> x.CreateTaskResult:
    """A `resultType: "task"` result as the extension's type."""
    try:
        return msgspec.convert(data, x.CreateTaskResult)
    except msgspec.ValidationError as exc:
        raise ProtocolViolationError(f"the server's CreateTaskResult is malformed: {exc}") from None


def get_result(raw: msgspec.Raw | dict[str, Any] | None) -> x.GetTaskResult:
    """A `tasks/get` result (bytes or builtins) as its status's shape."""
    try:
        if isinstance(raw, _ENCODED):
            return _get_decoder.decode(raw)
        typed: x.GetTaskResult = msgspec.convert(raw, x.GetTaskResult)
        return typed
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ProtocolViolationError(
            f"tasks/get: the server's result is malformed: {exc}"
        ) from None


def task_notification(message: dict[str, Any]) -> x.TaskStatusNotification | None:
    """A `notifications/tasks` message as its type (None when it does not fit)."""
    try:
        return msgspec.convert(message, x.TaskStatusNotification)
    except msgspec.ValidationError:
        return None


class TaskWatch:
    """Waiting for one task's outcome, as pure state.

    Feed every observed status (a `CreateTaskResult`, a `tasks/get` result or a
    `notifications/tasks` params) to `on_status()`; it answers `Wait(delay)`,
    `NeedInput(requests)` (only keys never answered before: the server repeats
    outstanding requests on every poll until its state catches up), or `Done(result)`
    with the request's final result, and raises `TaskFailedError` / `TaskCancelledError`. Report
    the keys answered with `answered()`. `poll`: the client's own interval in seconds;
    the wait is never shorter than the server's `pollIntervalMs`.
    """

    def __init__(self, task_id: str, method: str = "tools/call", *, poll: float | None = None):
        info = t.METHODS.get(method)
        self.task_id = task_id
        self.result_type: type[msgspec.Struct] = info.result if info is not None else t.Result
        self.poll = poll
        self.status: str | None = None
        self.message: str | None = None
        self._answered: set[str] = set()

    def delay(self, hint_ms: int | msgspec.UnsetType | None) -> float:
        hint = hint_ms / 1000 if isinstance(hint_ms, int) and hint_ms >= 0 else None
        if hint is None:
            return DEFAULT_POLL if self.poll is None else self.poll
        return hint if self.poll is None else max(hint, self.poll)

    def on_status(self, task: TaskShape) -> Wait | NeedInput | Done:
        if task.task_id != self.task_id:
            raise ProtocolViolationError(f"asked for task {self.task_id!r}, got {task.task_id!r}")
        status = status_of(task)
        self.status = status
        self.message = None if task.status_message is UNSET else task.status_message
        if status == "completed":
            result = getattr(task, "result", None)
            if result is None:  # a CreateTaskResult says the status, never the result
                return Wait(0.0)
            return Done(self._final(result))
        if status == "failed":
            error = getattr(task, "error", None)
            if error is None:
                return Wait(0.0)
            raise TaskFailedError(
                self.task_id, error.code, error.message, None if error.data is UNSET else error.data
            )
        if status == "cancelled":
            raise TaskCancelledError(self.task_id, self.message)
        if status == "input_required":
            requests = getattr(task, "input_requests", None)
            if requests is None:  # a CreateTaskResult: the requests come with tasks/get
                return Wait(0.0)
            fresh = {k: v for k, v in requests.items() if k not in self._answered}
            if fresh:
                return NeedInput(fresh)
        return Wait(self.delay(task.poll_interval_ms))

    def answered(self, keys: Iterable[str]) -> None:
        self._answered.update(keys)

    def _final(self, result: dict[str, Any]) -> msgspec.Struct:
        data = dict(result)
        data.setdefault("resultType", "complete")
        try:
            return msgspec.convert(data, self.result_type)
        except msgspec.ValidationError as exc:
            raise ProtocolViolationError(
                f"task {self.task_id!r}: its result does not match the schema: {exc}"
            ) from None


# -- 2025-11-25 core tasks ---------------------------------------------------------------------
def legacy_offered(version: str, capabilities: dict[str, Any]) -> bool:
    """Whether a legacy session's server runs `tools/call` as a task when asked."""
    if version != LEGACY_TASKS:
        return False
    found: Any = capabilities
    for key in ("tasks", "requests", "tools", "call"):
        found = found.get(key) if isinstance(found, dict) else None
    return isinstance(found, dict)


def legacy_support(page: dict[str, Any]) -> dict[str, str]:
    """Each listed tool's `execution.taskSupport` in a 2025-11-25 `tools/list` page
    ("forbidden" when it has none)."""
    support: dict[str, str] = {}
    for tool in page.get("tools") or ():
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        execution = tool.get("execution")
        value = execution.get("taskSupport") if isinstance(execution, dict) else None
        support[tool["name"]] = value if value in ("optional", "required") else "forbidden"
    return support


def _legacy_task(task: Any, what: str) -> dict[str, Any]:
    """A 2025-11-25 `Task` object's fields under the extension's names."""
    if not isinstance(task, dict):
        raise ProtocolViolationError(f"{what}: the server's task is not an object")
    fields = {k: v for k, v in task.items() if k not in ("ttl", "pollInterval")}
    fields["ttlMs"] = task.get("ttl")
    if isinstance(task.get("pollInterval"), int):
        fields["pollIntervalMs"] = task["pollInterval"]
    return fields


def legacy_created(data: dict[str, Any]) -> x.CreateTaskResult:
    """A 2025-11-25 `CreateTaskResult` (`{"task": Task}`) as the extension's."""
    fields = _legacy_task(data.get("task"), "tools/call")
    if "_meta" in data:
        fields["_meta"] = data["_meta"]
    return created_task({**fields, "resultType": "task"})


def legacy_status(data: dict[str, Any], outcome: dict[str, Any] | None = None) -> x.GetTaskResult:
    """A 2025-11-25 `tasks/get` result as the extension's shape for its status.
    `outcome`: what `tasks/result` gave for an ended task, `{"result": ...}` or
    `{"error": ...}`; an input-required task lists no requests (they come as requests
    of their own while `tasks/result` waits)."""
    fields = _legacy_task(data, "tasks/get")
    fields.update(outcome or {})
    if fields.get("status") == "input_required":
        fields.setdefault("inputRequests", {})
    return get_result({**fields, "resultType": "complete"})
