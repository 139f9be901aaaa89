"""The client's side of the Tasks extension (`io.modelcontextprotocol/tasks`), asyncio.

`client.call_tool(name, args, task=True)` declares the extension on that one request;
the server answers with the tool's result, or makes the call a task and the client gets
a `ToolTask`. Its `result()` (or `client.wait_task(...)`) polls `tasks/get` at the
server's suggested interval, answers the task's input requests with the client's
elicitation / sampling / roots callbacks through `tasks/update`, and returns the final
`CallToolResult` (`TaskFailedError` for a task ended by a JSON-RPC error, `TaskCancelledError`
for a cancelled one, `TimeoutError` when it outlasts `timeout`: the task itself runs
on). `get_task` / `update_task` / `cancel_task` / `wait_task` work on any task id this
client's principal created.

A 2025-11-25 session whose server offers task-augmented `tools/call` has the core
protocol's tasks instead: `start_legacy` asks for one (`params.task`), and the same
`ToolTask` comes back (the task's fields under the extension's names). Waiting polls
`tasks/get`, and once the task needs input or has ended calls `tasks/result`, which
the server answers when the task ends, sending its input requests meanwhile as
ordinary requests that the client's callbacks answer. `update_task` has no
counterpart there. Other legacy sessions have no tasks (ConfigurationError).

`run` is the wait of a call the caller did not ask to see as a task (`call_tool`
without `task=True`, of a tool that runs only as one): bounded like the call itself,
and giving up (cancelled, out of time) cancels the task with `tasks/cancel`. The
protocol decisions are in `mcpgen._client._tasks` (sans-I/O); `Tasks` is the helper a
`Client` holds and forwards its task methods to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

import msgspec

from mcpgen._client import Done, NeedInput, TaskWatch, Wait
from mcpgen._client._tasks import (
    get_result,
    legacy_created,
    legacy_offered,
    legacy_status,
    status_of,
)
from mcpgen._errors import (
    ConfigurationError,
    McpError,
    ProtocolViolationError,
    RequestTimeoutError,
)
from mcpgen.client._callbacks import Callbacks
from mcpgen.client._connection import Connection
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["DEFAULT_TASK_TIMEOUT", "Tasks", "ToolTask"]

DEFAULT_TASK_TIMEOUT: Final = 3600.0  # seconds wait_task waits by default (an hour)
LEGACY_TTL_MS: Final = 3_600_000  # how long a 2025-11-25 task is asked to be kept
_CANCEL_WAIT: Final = 5.0  # seconds a tasks/cancel sent on giving up may take
_ENDED: Final = frozenset({"completed", "failed"})
TaskStatus = x.CreateTaskResult | x.GetTaskResult


class ToolTask:
    """A tool call the server runs as a task: `id`, the `created` CreateTaskResult, and
    `last`, the newest status this handle has seen (a GetTaskResult or the
    CreateTaskResult)."""

    __slots__ = ("created", "id", "last", "tasks")

    def __init__(self, tasks: Tasks, created: x.CreateTaskResult) -> None:
        self.tasks = tasks
        self.created = created
        self.id = created.task_id
        self.last: TaskStatus = created

    @property
    def status(self) -> str:
        """The task's status when last seen (`working`, `input_required`, `completed` ...)."""
        return status_of(self.last)

    def __repr__(self) -> str:
        return f"ToolTask({self.id!r}, status={self.status!r})"

    async def get(self) -> x.GetTaskResult:
        """One `tasks/get`: the task's current status (and result, error or requests)."""
        status = await self.tasks.get_task(self.id)
        self.last = status
        return status

    async def result(
        self, *, timeout: float | None = DEFAULT_TASK_TIMEOUT, poll: float | None = None
    ) -> t.CallToolResult:
        """Wait for the outcome (see `Client.wait_task`)."""
        return await self.tasks.wait_task(self, timeout=timeout, poll=poll)

    async def cancel(self) -> None:
        """Ask the server to cancel the task (`tasks/cancel`)."""
        await self.tasks.cancel_task(self.id)

    async def update(self, input_responses: dict[str, Any]) -> None:
        """Answer the task's input requests (`tasks/update`)."""
        await self.tasks.update_task(self.id, input_responses)


class Tasks:
    """The task requests of one connection (the extension's, or a 2025-11-25 server's
    core tasks); `Client` forwards its task methods here."""

    def __init__(self, connection: Connection, callbacks: Callbacks) -> None:
        self.connection = connection
        self.callbacks = callbacks

    async def _task_request(
        self, method: str, params: dict[str, Any], timeout: float | None = None
    ) -> msgspec.Raw | None:
        """A `tasks/*` request (declaring the extension when modern); its raw result."""
        core = self.connection.core
        if core.era == "modern":
            return await self.connection.raw_request(
                method, params, capabilities=core.task_capabilities, timeout=timeout
            )
        if method == "tasks/update" or not self.legacy:
            raise ConfigurationError(
                f"{method}: this {core.era} session ({core.version}) has no such tasks"
            )
        return await self.connection.raw_request(method, params, timeout=timeout)

    @property
    def legacy(self) -> bool:
        """A 2025-11-25 session whose server runs tool calls as tasks when asked."""
        core = self.connection.core
        return core.era == "legacy" and legacy_offered(core.version, core.server_capabilities)

    async def start_legacy(
        self, params: dict[str, Any], timeout: float | None = None, token: str | None = None
    ) -> ToolTask | t.CallToolResult:
        """A 2025-11-25 task-augmented `tools/call`: the task's handle, or the result
        when the server ran the call at once. `token`: its progress token (the server
        may report the task's progress under it for as long as the task runs)."""
        sent = {**params, "task": {"ttl": LEGACY_TTL_MS}}
        if token is not None:
            sent["_meta"] = {"progressToken": token}
        raw = await self.connection.raw_request("tools/call", sent, timeout=timeout)
        data = msgspec.json.decode(raw) if raw is not None else None
        if isinstance(data, dict) and "task" in data and "content" not in data:
            return ToolTask(self, legacy_created(data))
        result = self.connection.core.result("tools/call", raw)
        assert isinstance(result, t.CallToolResult)
        return result

    async def _outcome(self, task_id: str, timeout: float) -> dict[str, Any]:
        """`tasks/result` (2025-11-25): `{"result": ...}` or `{"error": ...}` once the
        task ends; its input requests are served by the callbacks meanwhile."""
        try:
            raw = await self._task_request("tasks/result", {"taskId": task_id}, timeout)
        except McpError as exc:
            error = {"code": exc.code, "message": exc.message}
            return {"error": error if exc.data is None else {**error, "data": exc.data}}
        return {"result": msgspec.json.decode(raw) if raw is not None else {}}

    async def _legacy_get(
        self, task_id: str, timeout: float | None = None, wait: float | None = None
    ) -> x.GetTaskResult:
        """2025-11-25 `tasks/get`, and the outcome from `tasks/result` when the task has
        ended, or needs input and the caller may wait `wait` seconds for it to end."""
        raw = await self._task_request("tasks/get", {"taskId": task_id}, timeout)
        data = msgspec.json.decode(raw) if raw is not None else None
        if not isinstance(data, dict):
            raise ProtocolViolationError("tasks/get: the server's result is not an object")
        status = data.get("status")
        if status not in _ENDED and (status != "input_required" or wait is None):
            return legacy_status(data)
        outcome = await self._outcome(task_id, wait or timeout or self.connection.timeout)
        if "error" in outcome and status == "input_required":  # it may have been cancelled
            return await self._legacy_get(task_id, timeout)
        ended = "completed" if "result" in outcome else "failed"
        return legacy_status({**data, "status": ended}, outcome)

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> x.GetTaskResult:
        """`tasks/get`: the task's status as its shape (`GetTaskResultWorking`,
        `...InputRequired` with `input_requests`, `...Completed` with `result`,
        `...Failed` with `error`, `...Cancelled`). 2025-11-25: an ended task's outcome
        is fetched with `tasks/result`; an input-required one lists no requests."""
        if self.connection.core.era == "legacy":
            return await self._legacy_get(task_id, timeout)
        return get_result(await self._task_request("tasks/get", {"taskId": task_id}, timeout))

    async def update_task(self, task_id: str, input_responses: dict[str, Any]) -> None:
        """`tasks/update`: answers (ElicitResult, CreateMessageResult, ListRootsResult or
        plain dicts) to the task's input requests, by their keys."""
        responses = {key: msgspec.to_builtins(value) for key, value in input_responses.items()}
        await self._task_request("tasks/update", {"taskId": task_id, "inputResponses": responses})

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> None:
        """`tasks/cancel`: ask the server to stop the task (it may still finish first)."""
        await self._task_request("tasks/cancel", {"taskId": task_id}, timeout)

    async def run(self, handle: ToolTask, timeout: float) -> t.CallToolResult:
        """Wait for a task made of a call its caller did not ask to see as one, within
        the call's `timeout` (else RequestTimeoutError); a wait that is cancelled or
        runs out of time cancels the task (`tasks/cancel`, its failure ignored)."""
        try:
            return await self.wait_task(handle, timeout=timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            cancelling = asyncio.ensure_future(self.cancel_task(handle.id, timeout=_CANCEL_WAIT))
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(cancelling)
            if isinstance(exc, TimeoutError) and not isinstance(exc, RequestTimeoutError):
                raise RequestTimeoutError(timeout) from None
            raise

    async def wait_task(
        self,
        task: ToolTask | str,
        *,
        timeout: float | None = DEFAULT_TASK_TIMEOUT,
        poll: float | None = None,
    ) -> t.CallToolResult:
        """Poll the task until it ends and return its CallToolResult, answering its
        input requests with this client's callbacks (each key once) on the way.

        Polls every `pollIntervalMs` the server suggests (`poll`: seconds of the
        client's own; the longer of the two wins; 1 s when neither is given). Raises
        `TaskFailedError` (a JSON-RPC error ended it), `TaskCancelledError`, and `TimeoutError`
        after `timeout` seconds (None: no bound); waiting ending does not cancel the
        task: `cancel_task` does. An input request no callback handles raises
        ClientError (elicitation without `on_elicitation` is declined with "cancel").
        """
        handle = task if isinstance(task, ToolTask) else None
        task_id = task if isinstance(task, str) else task.id
        watch = TaskWatch(task_id, poll=poll)
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                if self.connection.core.era == "legacy":
                    return await self._watch_legacy(watch, handle, _left(deadline))
                return await self._watch(watch, handle)
        except TimeoutError:
            if not deadline.expired():
                raise  # one request's own timeout
            raise TimeoutError(
                f"task {task_id!r} still {watch.status or 'unobserved'} after {timeout} s"
                " (it was not cancelled)"
            ) from None

    async def _watch_legacy(
        self, watch: TaskWatch, handle: ToolTask | None, left: Callable[[], float]
    ) -> t.CallToolResult:
        # Poll tasks/get while the task works; once it needs input or has ended,
        # tasks/result (it may wait as long as the whole wait has left).
        fresh = handle is not None and handle.last is handle.created
        seen: TaskStatus | None = handle.created if handle is not None and fresh else None
        while True:
            if seen is not None:
                if isinstance(seen, x.CreateTaskResult) and seen.status != "working":
                    seen = await self._legacy_get(watch.task_id, wait=left())
                step = watch.on_status(seen)
                if isinstance(step, Done):
                    result = step.result
                    assert isinstance(result, t.CallToolResult)
                    return result
                assert isinstance(step, Wait)  # a 2025-11-25 status lists no requests
                await asyncio.sleep(step.delay)
            seen = await self._legacy_get(watch.task_id, wait=left())
            if handle is not None:
                handle.last = seen

    async def _watch(self, watch: TaskWatch, handle: ToolTask | None) -> t.CallToolResult:
        # A fresh handle's CreateTaskResult says how long to wait before the first poll;
        # anything seen since may be stale (input answered by hand): poll at once.
        fresh = handle is not None and handle.last is handle.created
        step: Wait | NeedInput | Done | None = (
            watch.on_status(handle.created) if handle is not None and fresh else None
        )
        while True:
            if isinstance(step, Done):
                result = step.result
                assert isinstance(result, t.CallToolResult)
                return result
            if isinstance(step, Wait):
                await asyncio.sleep(step.delay)
            status = await self.get_task(watch.task_id)
            if handle is not None:
                handle.last = status
            step = watch.on_status(status)
            if isinstance(step, NeedInput):
                answers = await self.callbacks.fulfil_all(step.requests)
                await self.update_task(watch.task_id, answers)
                watch.answered(step.requests)
                step = watch.on_status(status)  # nothing fresh in it now: a Wait


def _left(deadline: asyncio.Timeout) -> Callable[[], float]:
    """Seconds `deadline` leaves (an hour when it has no end)."""

    def left() -> float:
        when = deadline.when()
        if when is None:
            return DEFAULT_TASK_TIMEOUT
        return max(when - asyncio.get_running_loop().time(), 0.001)

    return left
