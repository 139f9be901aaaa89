"""The Tasks extension (`io.modelcontextprotocol/tasks`): the task store and running a
tool call as a task (the `tasks/*` methods are in `_task_methods`).

A tool registered with `task="optional"` or `"required"` answers a modern `tools/call`
whose request declares the extension (in that request's client capabilities) with a
`CreateTaskResult`; the client then polls `tasks/get`, answers the task's input requests
with `tasks/update` and may `tasks/cancel` it. Legacy sessions never get tasks.

The store belongs to the ServerCore, not to a Session: each modern HTTP POST has a
Session of its own, and a task outlives the request that created it. The core does no
I/O: a task's work starts through the `spawn` function the Server hands in (an asyncio
task there), and the store keeps the returned handle to cancel it. Records live `ttl`
from creation (checked lazily); an expired id, an unknown one and another caller's one
all get the same -32602.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._call import Call, Channel
from mcpgen._server._content import failure, to_call_result
from mcpgen._server._context import Context, Drive, InputRequired, finish
from mcpgen._server._mrtr import input_response, request_kinds
from mcpgen._server._state import random_token
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore
    from mcpgen._server._defs import ToolDef

__all__ = ["TASKS", "Spawn", "TaskRecord", "TaskStore", "declared", "GET_SHAPES", "missing"]

TASKS = x.EXTENSION_ID
WORKING, INPUT_REQUIRED = "working", "input_required"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
_SWEEP_EVERY = 1.0  # seconds between full expiry sweeps
_encode = msgspec.json.Encoder().encode


class Handle(Protocol):
    """Running work that can be cancelled (what `spawn` returns: an asyncio.Task)."""

    def cancel(self) -> Any: ...


Spawn = Callable[[Coroutine[Any, Any, None]], Handle]


class _Nowhere(Channel):
    """A task has no request stream to carry notifications: they are dropped."""

    def notify(self, frame: bytes) -> None:
        return None


_NOWHERE = _Nowhere()


def declared(call: Call) -> bool:
    """The request declares the extension in its own client capabilities."""
    extensions = call.caps.get("extensions")
    return call.era == "modern" and isinstance(extensions, dict) and TASKS in extensions


def missing(what: str) -> McpError:
    return proto.missing_capability(
        {"extensions": {TASKS: {}}},
        f"{what} needs the {TASKS} extension in the request's client capabilities",
    )


def _unknown(task_id: str) -> McpError:
    return McpError(proto.INVALID_PARAMS, f"unknown or expired task: {task_id!r}")


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


class TaskRecord:
    """One task: its status and what its runs need (the handler's call and arguments)."""

    __slots__ = (
        "answers",
        "asked",
        "call",
        "created",
        "error",
        "handle",
        "id",
        "issued",
        "kwargs",
        "message",
        "pending",
        "poll_ms",
        "principal",
        "result",
        "state",
        "status",
        "store",
        "tool",
        "ttl_ms",
        "updated",
    )

    def __init__(self, store: TaskStore, call: Call, tool: ToolDef, kwargs: dict[str, Any]) -> None:
        self.id = random_token(18)  # unguessable: the id is all a caller needs
        self.store = store
        self.call = call
        self.tool = tool
        self.kwargs = kwargs
        self.principal = call.principal
        self.status = WORKING
        self.message: str | None = None
        self.created = self.updated = store.clock()
        self.ttl_ms = store.ttl_ms
        self.poll_ms = store.poll_ms
        self.handle: Handle | None = None
        self.pending: dict[str, Any] = {}  # outstanding input requests, by wire key
        self.asked: dict[str, tuple[str, str]] = {}  # wire key -> (handler's key, method)
        self.answers: dict[str, Any] = {}  # this round's typed answers, by handler's key
        self.issued: set[str] = set()  # every wire key ever used (never reused)
        self.state: Any = None
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created + self.ttl_ms / 1000

    def note_progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.status in TERMINAL:
            return
        if message is None:
            message = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        self.message = message
        self.updated = self.store.clock()

    def fields(self) -> dict[str, Any]:
        """The `Task` fields every shape of this task carries."""
        return {
            "task_id": self.id,
            "status_message": UNSET if self.message is None else self.message,
            "created_at": _iso(self.created),
            "last_updated_at": _iso(self.updated),
            "ttl_ms": self.ttl_ms,
            "poll_interval_ms": self.poll_ms,
        }

    def detail(self, shapes: dict[str, type]) -> Any:
        """The DetailedTask as `shapes[status]` (a tasks/get result or notification)."""
        fields = self.fields()
        if self.status == INPUT_REQUIRED:
            fields["input_requests"] = dict(self.pending)
        elif self.status == COMPLETED:
            fields["result"] = self.result
        elif self.status == FAILED:
            assert self.error is not None
            error = self.error
            fields["error"] = t.Error(
                code=error.code,
                message=error.message,
                data=UNSET if error.data is None else error.data,
            )
        return shapes[self.status](**fields)


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


class TaskStore:
    def __init__(
        self,
        core: ServerCore,
        spawn: Spawn | None,
        *,
        ttl_ms: int | None,
        poll_ms: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.core = core
        self.spawn = spawn
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.clock = clock
        self.records: dict[str, TaskRecord] = {}
        self._swept = 0.0

    # -- tools/call ------------------------------------------------------------------------
    def dispatch(self, call: Call, tool: ToolDef, kwargs: dict[str, Any]) -> Any:
        """A call of a task-enabled tool (arguments already validated): None to run it
        as an ordinary call, else the answer (a CreateTaskResult, or a coroutine
        resolving to the request's answer for a detachable handler)."""
        if call.era != "modern":
            if tool.task == "required":
                raise McpError(
                    proto.INVALID_PARAMS,
                    f"tool {tool.name!r} runs only as a task (the {TASKS} extension), "
                    "which a legacy session cannot use: connect with protocol 2026-07-28",
                )
            return None
        if not declared(call):
            if tool.task == "required":
                raise missing(f"tool {tool.name!r} runs only as a task: it")
            return None
        if tool.detach:
            return self._until_detached(call, tool, kwargs)
        record = self._create(_task_call(call), tool, kwargs)
        self._start(record, None)
        return self.created(record)

    async def _until_detached(self, call: Call, tool: ToolDef, kwargs: dict[str, Any]) -> Any:
        """Run the handler inside the request until it detaches (then answer with the
        task and let its runner resume the same coroutine) or returns (an ordinary
        answer, input-required rounds included)."""
        call.detachable = True
        if tool.context_param is not None:
            kwargs[tool.context_param] = Context(call)
        coro = tool.fn(**kwargs)
        try:
            detached, value = await Drive(coro)
        except McpError:
            raise
        except Exception as exc:
            return failure(tool.name, exc, self.core.mask_errors)
        finally:
            call.detachable = False
        if not detached:
            return value if isinstance(value, InputRequired) else to_call_result(value)
        # From here on nothing goes to the request's stream; the task has its status.
        call.channel, call.cancel_hook = _NOWHERE, None
        call.progress_token = call.log_rank = None
        record = self._create(call, tool, kwargs)
        self._start(record, coro)
        return self.created(record)

    def _create(self, call: Call, tool: ToolDef, kwargs: dict[str, Any]) -> TaskRecord:
        self.sweep()
        record = TaskRecord(self, call, tool, kwargs)
        call.task = record
        # Stored before the CreateTaskResult exists: a tasks/get right after it resolves.
        self.records[record.id] = record
        return record

    def created(self, record: TaskRecord) -> x.CreateTaskResult:
        return x.CreateTaskResult(status=record.status, **record.fields())  # type: ignore[arg-type]

    # -- running -----------------------------------------------------------------------------
    def _start(self, record: TaskRecord, resumed: Coroutine[Any, Any, Any] | None) -> None:
        if self.spawn is None:
            self.records.pop(record.id, None)
            if resumed is not None:
                resumed.close()
            raise ConfigurationError("this ServerCore was built without a spawn function")
        record.handle = self.spawn(self._run(record, resumed))

    async def _run(self, record: TaskRecord, resumed: Coroutine[Any, Any, Any] | None) -> None:
        """One run of the handler: to its outcome, or to its next input round."""
        tool = record.tool
        try:
            if resumed is not None:
                value = await finish(resumed)
            else:
                kwargs = dict(record.kwargs)
                if tool.context_param is not None:
                    kwargs[tool.context_param] = Context(record.call)
                value = tool.fn(**kwargs)
                if tool.is_async:
                    value = await value
        except McpError as exc:
            self._settle(record, FAILED, error=exc)
            return
        except Exception as exc:  # a tool failure is a completed call with isError
            self._settle(record, COMPLETED, result=failure(tool.name, exc, self.core.mask_errors))
            return
        except BaseException:
            self._settle(record, CANCELLED)
            raise
        finally:
            record.handle = None
        try:
            if isinstance(value, InputRequired):
                self._ask(record, value)
            else:
                self._settle(record, COMPLETED, result=to_call_result(value))
        except McpError as exc:
            self._settle(record, FAILED, error=exc)
        except Exception as exc:  # the value cannot become a result: our internal error
            detail = "" if self.core.mask_errors else f": {type(exc).__name__}: {exc}"
            self._settle(record, FAILED, error=McpError(-32603, "internal error" + detail))

    def _ask(self, record: TaskRecord, out: InputRequired) -> None:
        """The handler needs input: the task waits in input_required with the requests
        under keys never used before in this task (a reused key gets a suffix)."""
        if record.status in TERMINAL:
            return  # cancelled meanwhile (the handler swallowed its cancellation)
        kinds = request_kinds(record.call, out)
        call = record.call
        if not out.requests:  # state only: run again at once with it
            call.input_responses, call.state = {}, out.state
            self._start(record, None)
            return
        pending, asked = {}, {}
        for key, request in out.requests.items():
            wire, n = key, 1
            while wire in record.issued:
                n += 1
                wire = f"{key}.{n}"
            record.issued.add(wire)
            pending[wire] = request
            asked[wire] = (key, kinds[key])
        record.pending, record.asked, record.answers, record.state = pending, asked, {}, out.state
        self._change(record, INPUT_REQUIRED)

    def update(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """Answers to outstanding input requests (others are ignored); once a round is
        fully answered the handler runs again with the answers and its state."""
        if record.status != INPUT_REQUIRED:
            return
        typed = []
        for wire, raw in responses.items():
            if wire not in record.pending:
                continue  # never issued, already answered: ignored
            key, method = record.asked[wire]
            try:
                typed.append((wire, key, input_response(method, raw)))
            except msgspec.ValidationError as exc:
                raise McpError(
                    proto.INVALID_PARAMS,
                    f"inputResponses[{wire!r}] is not a valid {method} result: {exc}",
                ) from None
        if not typed:
            return
        for wire, key, answer in typed:
            del record.pending[wire]
            record.answers[key] = answer
        if record.pending:
            self._change(record, INPUT_REQUIRED)
            return
        call = record.call
        call.input_responses, call.state = record.answers, record.state
        record.asked, record.answers, record.state = {}, {}, None
        self._change(record, WORKING)
        self._start(record, None)

    def cancel(self, record: TaskRecord, message: str = "cancelled by the client") -> None:
        """Cooperative: the status is cancelled at once and the running work is cancelled."""
        if record.status in TERMINAL:
            return
        handle = record.handle
        record.call.cancelled = True
        record.message = message
        self._settle(record, CANCELLED)
        if handle is not None:
            handle.cancel()

    def _settle(
        self,
        record: TaskRecord,
        status: str,
        *,
        result: t.CallToolResult | None = None,
        error: McpError | None = None,
    ) -> None:
        if record.status in TERMINAL:
            return  # cancelled (or expired) meanwhile: the late outcome is dropped
        if result is not None:
            record.result = msgspec.to_builtins(result)
        if error is not None:
            record.error = error
            if record.message is None:
                record.message = error.message
        record.pending, record.asked, record.answers, record.state = {}, {}, {}, None
        record.kwargs = {}
        self._change(record, status)

    def _change(self, record: TaskRecord, status: str) -> None:
        record.status = status
        record.updated = self.clock()
        self._publish(record)

    # -- lookups and expiry ------------------------------------------------------------------
    def find(self, task_id: str, principal: str | None) -> TaskRecord:
        now = self.clock()
        self.sweep(now)
        record = self.records.get(task_id)
        if record is None or record.principal != principal:
            raise _unknown(task_id)
        if record.expired(now):
            self._drop(record)
            raise _unknown(task_id)
        return record

    def sweep(self, now: float | None = None) -> None:
        """Forget expired tasks (cancelling any still running); at most once a second."""
        now = self.clock() if now is None else now
        if now - self._swept < _SWEEP_EVERY:
            return
        self._swept = now
        for record in [r for r in self.records.values() if r.expired(now)]:
            self._drop(record)

    def _drop(self, record: TaskRecord) -> None:
        self.records.pop(record.id, None)
        self.cancel(record, "expired")

    def close(self) -> None:
        """Server shutdown: every unfinished task is cancelled."""
        for record in list(self.records.values()):
            self.cancel(record, "the server shut down")

    # -- notifications/tasks ----------------------------------------------------------------
    def watchable(self, task_ids: list[str], principal: str | None) -> list[str]:
        """Of `task_ids`, those a listen stream of `principal` may follow."""
        now = self.clock()
        return [
            i
            for i in dict.fromkeys(task_ids)
            if (r := self.records.get(i)) is not None
            and r.principal == principal
            and not r.expired(now)
        ]

    def _publish(self, record: TaskRecord) -> None:
        listeners = [
            lst for lst in self.core.listeners.values() if record.id in lst.extra.get("taskIds", ())
        ]
        if not listeners:
            return
        params = msgspec.to_builtins(record.detail(_NOTE))
        for listener in listeners:
            tagged = {**params, "_meta": {proto.META_SUBSCRIPTION_ID: listener.request_id}}
            frame = {"jsonrpc": "2.0", "method": "notifications/tasks", "params": tagged}
            listener.channel.notify(_encode(frame))


def _task_call(call: Call) -> Call:
    """The call a task's handler sees: the request's identity, no stream to write to."""
    task_call = Call(
        call.request_id, call.method, call.era, call.version, call.meta, call.caps, _NOWHERE, None
    )
    task_call.principal = call.principal
    task_call.info = call.info
    task_call.progress_token = None
    task_call.input_responses = call.input_responses
    task_call.state = call.state
    return task_call
