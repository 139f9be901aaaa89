"""The client's side of the Tasks extension (`io.modelcontextprotocol/tasks`), asyncio.

`client.call_tool(name, args, task=True)` declares the extension on that one request;
the server answers with the tool's result, or makes the call a task and the client gets
a `ToolTask`. Its `result()` (or `client.wait_task(...)`) polls `tasks/get` at the
server's suggested interval, answers the task's input requests with the client's
elicitation / sampling / roots callbacks through `tasks/update`, and returns the final
`CallToolResult` (`TaskFailedError` for a task ended by a JSON-RPC error, `TaskCancelledError`
for a cancelled one, `TimeoutError` when it outlasts `timeout`: the task itself runs
on). Tasks exist only in the modern era: there `get_task` / `update_task` /
`cancel_task` / `wait_task` work on any task id this client's principal created; a
legacy session raises ConfigurationError for them, and runs `call_tool(task=True)` as
an ordinary call. The protocol decisions are in `mcpgen._client._tasks` (sans-I/O); `Tasks` is the
helper a `Client` holds and forwards its task methods to.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import msgspec

from mcpgen._client import Done, NeedInput, TaskWatch, Wait
from mcpgen._client._tasks import get_result, status_of
from mcpgen._errors import ConfigurationError
from mcpgen.client._callbacks import Callbacks
from mcpgen.client._connection import Connection
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["DEFAULT_TASK_TIMEOUT", "Tasks", "ToolTask"]

DEFAULT_TASK_TIMEOUT: Final = 3600.0  # seconds wait_task waits by default (an hour)
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
    """The task requests of one connection (modern era only); `Client` forwards its
    task methods here."""

    def __init__(self, connection: Connection, callbacks: Callbacks) -> None:
        self.connection = connection
        self.callbacks = callbacks

    async def _task_request(
        self, method: str, params: dict[str, Any], timeout: float | None = None
    ) -> msgspec.Raw | None:
        """A `tasks/*` request declaring the extension; its raw result."""
        core = self.connection.core
        if core.era != "modern":
            raise ConfigurationError(
                f"{method}: tasks exist only in the modern era (this session is {core.era})"
            )
        return await self.connection.raw_request(
            method, params, capabilities=core.task_capabilities, timeout=timeout
        )

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> x.GetTaskResult:
        """`tasks/get`: the task's status as its shape (`GetTaskResultWorking`,
        `...InputRequired` with `input_requests`, `...Completed` with `result`,
        `...Failed` with `error`, `...Cancelled`)."""
        return get_result(await self._task_request("tasks/get", {"taskId": task_id}, timeout))

    async def update_task(self, task_id: str, input_responses: dict[str, Any]) -> None:
        """`tasks/update`: answers (ElicitResult, CreateMessageResult, ListRootsResult or
        plain dicts) to the task's input requests, by their keys."""
        responses = {key: msgspec.to_builtins(value) for key, value in input_responses.items()}
        await self._task_request("tasks/update", {"taskId": task_id, "inputResponses": responses})

    async def cancel_task(self, task_id: str) -> None:
        """`tasks/cancel`: ask the server to stop the task (it may still finish first)."""
        await self._task_request("tasks/cancel", {"taskId": task_id})

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
                return await self._watch(watch, handle)
        except TimeoutError:
            if not deadline.expired():
                raise  # one request's own timeout
            raise TimeoutError(
                f"task {task_id!r} still {watch.status or 'unobserved'} after {timeout} s"
                " (it was not cancelled)"
            ) from None

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
