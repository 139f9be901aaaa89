"""The Tasks extension (`io.modelcontextprotocol/tasks`): its rules and the wire shapes
of a task record (the runner is in `_task_runner`, the `tasks/*` methods in
`_task_methods`).

A tool registered with `task="optional"` or `"required"` answers a modern `tools/call`
whose request declares the extension (in that request's client capabilities) with a
`CreateTaskResult`; the client then polls `tasks/get`, answers the task's input requests
with `tasks/update` and may `tasks/cancel` it. Legacy sessions never get tasks.

A task has two halves. Its record (`TaskState`: status, result, error, outstanding
input requests) lives in a `TaskStore`, so any worker answers `tasks/get` from the
store alone; this module turns a record into what the wire shows. Its live parts (the
handler's coroutine, the answers of an input round) stay in the `TaskRunner` of the
worker that created it.

An expired id, an unknown one and another principal's one all get the same -32602.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._call import Call, Channel, Handle
from mcpgen._server._defs import ToolDef
from mcpgen._server._mrtr import input_response
from mcpgen.stores import ReplyEvent, TaskEvent, TaskState, TaskStore
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = [
    "GET_SHAPES",
    "TASK_INPUT",
    "Nowhere",
    "Handle",
    "Publish",
    "Spawn",
    "TASKS",
    "TERMINAL",
    "as_task",
    "declared",
    "detail",
    "error_object",
    "event",
    "fields",
    "forward",
    "input_event",
    "input_of",
    "issue",
    "missing",
    "task_call",
    "typed_answers",
    "unknown",
]

TASKS = x.EXTENSION_ID
WORKING, INPUT_REQUIRED = "working", "input_required"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})


Spawn = Callable[[Coroutine[Any, Any, None]], Handle]  # how a task's work starts
Publish = Callable[[TaskEvent | ReplyEvent], None]  # how a status change gets onto the bus

# A task runs on the worker that started it; answers to its input requests (tasks/update)
# that reach another worker travel to it on the bus, as a `ReplyEvent` whose session id
# is this prefix and the task id (legacy session ids hold no "/").
TASK_INPUT = "task/"


class _Input(msgspec.Struct, frozen=True):
    principal: str | None
    responses: dict[str, Any]


def input_event(task_id: str, principal: str | None, responses: dict[str, Any]) -> ReplyEvent:
    return ReplyEvent(TASK_INPUT + task_id, msgspec.msgpack.encode(_Input(principal, responses)))


_FORWARD_WAIT_S = 5.0  # how long a forwarded tasks/update waits for the owner to take it


async def forward(
    store: TaskStore,
    publish: Publish,
    sleep: Callable[[float], Awaitable[None]],
    state: TaskState,
    principal: str | None,
    responses: dict[str, Any],
) -> None:
    """Answers for a task another worker runs: checked here against the record's requests,
    sent to the owner on the bus, and returned from only once the record shows them taken,
    so a `tasks/get` on any worker after the acknowledgement sees the answered keys gone.
    Only the answers to outstanding requests travel: with none, nothing is sent (the
    owner would ignore the rest; no bus traffic for what a client can repeat at will).
    Raises when the owner does not take them in time (it died); sending again is safe."""
    pending = state.input_requests
    asked = {wire: (wire, request.get("method", "")) for wire, request in pending.items()}
    sent = {wire for wire, _, _ in typed_answers(pending, asked, responses)}
    if not sent:
        return
    publish(input_event(state.id, principal, {wire: responses[wire] for wire in sent}))
    delay, waited = 0.002, 0.0
    while sent and waited < _FORWARD_WAIT_S:
        await sleep(delay)
        waited += delay
        delay = min(delay * 2, 0.05)
        now = await store.get(state.id)
        if now is None or now.status != INPUT_REQUIRED or sent.isdisjoint(now.input_requests):
            return
    if sent:
        raise McpError(
            t.INTERNAL_ERROR,
            f"the worker running task {state.id!r} did not take the answers within "
            f"{_FORWARD_WAIT_S:g} s; sending them again is safe",
        )


def input_of(event: ReplyEvent) -> tuple[str, str | None, dict[str, Any]] | None:
    """(task id, principal, responses) of a forwarded tasks/update, else None."""
    if not event.session_id.startswith(TASK_INPUT):
        return None
    found = msgspec.msgpack.decode(event.frame, type=_Input)
    return event.session_id[len(TASK_INPUT) :], found.principal, found.responses


def declared(call: Call) -> bool:
    """The request declares the extension in its own client capabilities."""
    extensions = call.caps.get("extensions")
    return call.era == "modern" and isinstance(extensions, dict) and TASKS in extensions


def missing(what: str) -> McpError:
    return proto.missing_capability(
        {"extensions": {TASKS: {}}},
        f"{what} needs the {TASKS} extension in the request's client capabilities",
    )


def as_task(call: Call, tool: ToolDef) -> bool:
    """Whether a call of the task-enabled `tool` runs as a task; raises when the tool
    runs only as one and the request cannot take it."""
    if call.era != "modern":
        if tool.task == "required":
            raise McpError(
                proto.INVALID_PARAMS,
                f"tool {tool.name!r} runs only as a task (the {TASKS} extension), "
                "which a legacy session cannot use: connect with protocol 2026-07-28",
            )
        return False
    if not declared(call):
        if tool.task == "required":
            raise missing(f"tool {tool.name!r} runs only as a task: it")
        return False
    return True


def unknown(task_id: str) -> McpError:
    return McpError(proto.INVALID_PARAMS, f"unknown or expired task: {task_id!r}")


# A JSON-RPC code of the range JSON-RPC 2.0 leaves to servers (-32000 to -32099), apart
# from those MCP revisions use; 29 as in HTTP 429.
TOO_MANY_TASKS = -32029


def too_many(most: int) -> McpError:
    """A client already runs `most` tasks: it must wait for one to end (or cancel one)."""
    return McpError(
        TOO_MANY_TASKS,
        f"too many tasks running: at most {most} per client; wait for one to end or cancel one",
        {"maxRunningTasks": most},
    )


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


# -- a record as the wire shows it --------------------------------------------------------------
GET_SHAPES: dict[str, type] = {
    WORKING: x.GetTaskResultWorking,
    INPUT_REQUIRED: x.GetTaskResultInputRequired,
    COMPLETED: x.GetTaskResultCompleted,
    FAILED: x.GetTaskResultFailed,
    CANCELLED: x.GetTaskResultCancelled,
}
_NOTE: dict[str, type] = {
    WORKING: x.TaskStatusNotificationParamsWorking,
    INPUT_REQUIRED: x.TaskStatusNotificationParamsInputRequired,
    COMPLETED: x.TaskStatusNotificationParamsCompleted,
    FAILED: x.TaskStatusNotificationParamsFailed,
    CANCELLED: x.TaskStatusNotificationParamsCancelled,
}


def fields(state: TaskState) -> dict[str, Any]:
    """The `Task` fields every shape of a task carries."""
    return {
        "task_id": state.id,
        "status_message": UNSET if state.status_message is None else state.status_message,
        "created_at": _iso(state.created_ms),
        "last_updated_at": _iso(state.updated_ms),
        "ttl_ms": state.ttl_ms,
        "poll_interval_ms": state.poll_ms,
    }


def detail(state: TaskState, shapes: dict[str, type]) -> Any:
    """The DetailedTask as `shapes[status]` (a tasks/get result or notification)."""
    shown = fields(state)
    if state.status == INPUT_REQUIRED:
        shown["input_requests"] = dict(state.input_requests)
    elif state.status == COMPLETED:
        shown["result"] = state.result
    elif state.status == FAILED:
        error = state.error or {}
        shown["error"] = t.Error(
            code=error.get("code", t.INTERNAL_ERROR),
            message=error.get("message", ""),
            data=error.get("data", UNSET),
        )
    return shapes[state.status](**shown)


def error_object(error: McpError) -> dict[str, Any]:
    """A JSON-RPC error object as a record keeps it (no `data` when there is none)."""
    obj: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        obj["data"] = error.data
    return obj


# -- input rounds ---------------------------------------------------------------------------------
def issue(
    requests: dict[str, Any], kinds: dict[str, str], issued: set[str]
) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """A round's input requests under wire keys never used before in the task (a reused
    key gets a suffix): (request as builtins, by wire key), (wire key -> (handler's key,
    method)). Adds the new keys to `issued`."""
    pending, asked = {}, {}
    for key, request in requests.items():
        wire, n = key, 1
        while wire in issued:
            n += 1
            wire = f"{key}.{n}"
        issued.add(wire)
        pending[wire] = msgspec.to_builtins(request)
        asked[wire] = (key, kinds[key])
    return pending, asked


def typed_answers(
    pending: dict[str, Any], asked: dict[str, tuple[str, str]], responses: dict[str, Any]
) -> list[tuple[str, str, Any]]:
    """The answers to outstanding requests as (wire key, handler's key, typed result);
    answers to anything else are ignored, a malformed one is -32602."""
    typed = []
    for wire, raw in responses.items():
        if wire not in pending:
            continue  # never issued, already answered: ignored
        key, method = asked[wire]
        try:
            typed.append((wire, key, input_response(method, raw)))
        except msgspec.ValidationError as exc:
            raise McpError(
                proto.INVALID_PARAMS,
                f"inputResponses[{wire!r}] is not a valid {method} result: {exc}",
            ) from None
    return typed


def event(state: TaskState) -> TaskEvent:
    """The status change as `notifications/tasks` params, for the bus."""
    return TaskEvent(state.id, state.principal, msgspec.to_builtins(detail(state, _NOTE)))


class Nowhere(Channel):
    """A task's channel: it has no request stream, so notifications are dropped; async
    work starts through the runner's spawn function."""

    def __init__(self, spawn: Spawn | None) -> None:
        self._spawn = spawn

    def notify(self, frame: bytes) -> None:
        return None

    def spawn(self, coro: Coroutine[Any, Any, None]) -> Handle:
        if self._spawn is None:
            coro.close()
            raise ConfigurationError("this ServerCore was built without a spawn function")
        return self._spawn(coro)


def task_call(call: Call, channel: Nowhere) -> Call:
    """The call a task's handler sees: the request's identity, no stream to write to."""
    task_call = Call(
        call.request_id, call.method, call.era, call.version, call.meta, call.caps, channel, None
    )
    task_call.principal = call.principal
    task_call.auth = call.auth
    task_call.info = call.info
    task_call.progress_token = None
    task_call.input_responses = call.input_responses
    task_call.state = call.state
    task_call.lifespan = call.lifespan
    task_call.origin, task_call.core = call.origin, call.core
    task_call.params = call.params
    return task_call
