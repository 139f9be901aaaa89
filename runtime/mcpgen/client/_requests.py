"""What a client asks of a server: the requests of `Client` (its base class, `Requests`),
each typed, through the client's connection.

Lists are followed page by page and reads answered from the result cache when the
server's hints allow (`mcpgen.client._lists`); task requests go to the `Tasks` helper
(`mcpgen.client._tasks`); `listen` hears changes in either era
(`mcpgen.client._listen`). Every request leaves through `request`, looked up at each
call, so whatever wraps it sees them all.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Coroutine, Sequence
from typing import Any, Literal, Unpack, cast, overload

import msgspec

from mcpgen._client._cache import ResultCache
from mcpgen._client._tasks import tasks_required
from mcpgen._errors import McpError
from mcpgen.client import _callbacks as cb
from mcpgen.client._apps import App, read_app
from mcpgen.client._connection import Connection, Note
from mcpgen.client._listen import changes
from mcpgen.client._lists import (
    ReadResult,
    Unwrapper,
    cached,
    concrete,
    header_checked,
    headers_known,
    pages,
)
from mcpgen.client._options import PageOptions
from mcpgen.client._tasks import DEFAULT_TASK_TIMEOUT, Tasks, ToolTask
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["Requests"]


class Requests:
    """The asking half of `mcpgen.Client` (its only subclass, which sets these
    attributes up): any request, the lists and reads, tool calls, prompts, completion,
    the log level, change notifications and the task requests."""

    connection: Connection
    cache: ResultCache
    unwrap: Unwrapper
    tasks: Tasks

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: cb.ProgressCallback | None = None,
        tasks: bool = False,
    ) -> Coroutine[Any, Any, msgspec.Struct]:
        """Send any request and return its typed result (input rounds fulfilled).
        `tasks`: declare the Tasks extension (modern era; the result may be a
        CreateTaskResult). The connection's own coroutine: no extra frame per call."""
        return self.connection.request(
            method, params, timeout=timeout, progress=progress, tasks=tasks
        )

    async def discover(self) -> t.DiscoverResult:
        """`server/discover` (modern servers): versions, capabilities, instructions."""
        return await self.connection.discover()

    # -- tasks (modern era) -----------------------------------------------------------------------
    async def get_task(self, task_id: str, *, timeout: float | None = None) -> x.GetTaskResult:
        """`tasks/get` (see `Tasks.get_task`)."""
        return await self.tasks.get_task(task_id, timeout=timeout)

    async def update_task(self, task_id: str, input_responses: dict[str, Any]) -> None:
        """`tasks/update` (see `Tasks.update_task`)."""
        await self.tasks.update_task(task_id, input_responses)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> None:
        """`tasks/cancel` (see `Tasks.cancel_task`)."""
        await self.tasks.cancel_task(task_id, timeout=timeout)

    async def wait_task(
        self,
        task: ToolTask | str,
        *,
        timeout: float | None = DEFAULT_TASK_TIMEOUT,
        poll: float | None = None,
    ) -> t.CallToolResult:
        """Poll the task until it ends; its CallToolResult (see `Tasks.wait_task`)."""
        return await self.tasks.wait_task(task, timeout=timeout, poll=poll)

    # -- lists and reads (cached) -----------------------------------------------------------------
    async def _pages(
        self, method: str, field: str, cursor: str | None, options: PageOptions
    ) -> list[Any]:
        request = functools.partial(self.request, timeout=options.get("timeout"))  # per page
        every, refresh = options.get("all_pages", True), options.get("refresh", False)
        return await pages(self.cache, request, method, field, cursor, every, refresh)

    async def list_tools(
        self, cursor: str | None = None, **options: Unpack[PageOptions]
    ) -> list[t.Tool]:
        """The server's tools, every page unless `all_pages=False` (`refresh=True`: ask again)."""
        tools = self.unwrap.tools(await self._pages("tools/list", "tools", cursor, options))
        return header_checked(self.connection, tools) if self.connection.link.http else tools

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: cb.ProgressCallback | None = None,
        task: Literal[False] = False,
    ) -> t.CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: cb.ProgressCallback | None = None,
        task: bool,
    ) -> t.CallToolResult | ToolTask: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: cb.ProgressCallback | None = None,
        task: bool = False,
    ) -> t.CallToolResult | ToolTask:
        """Call a tool; its result, input rounds fulfilled by the callbacks.

        A tool that runs only as a task is run as one and waited for, so its result
        comes back like any other: in 2026-07-28 when the server refuses the plain call
        for want of the Tasks extension, the call is sent again declaring it; in a
        2025-11-25 session, by the tool's listed `execution.taskSupport` (the tools are
        listed first when this one is not known yet and the server offers tasks). That
        wait is bounded by `timeout` like any call; when it is cancelled or runs out,
        the client cancels the task (`tasks/cancel`).

        `task=True` asks for a task whatever the tool: 2026-07-28 declares the Tasks
        extension on this request (the server may then make it a task), 2025-11-25
        task-augments it when the tool allows tasks; you get a `ToolTask`
        (`await handle.result()`) when the server made it one, else the result. A
        session without tasks makes the call an ordinary one.

        Args:
            name: The tool's name.
            arguments: Its arguments, a JSON object (none: `{}`).
            timeout: Seconds to wait for the answer (default: the client's `timeout`).
            progress: Called with `progress, total, message` as the server reports them
                (for a task, while this call waits for it).
            task: Ask for a task; get its handle.

        Returns:
            The result (a tool's own failure is a result with `is_error` set), or a
            `ToolTask` when `task=True` and the server made the call a task.

        Raises:
            McpError: The server answered with a JSON-RPC error (an unknown tool,
                invalid arguments); a task it made of the call failed (TaskFailedError)
                or was cancelled (TaskCancelledError).
            TransportError: The connection failed, timed out or closed.
        """
        connection = self.connection
        await headers_known(connection, name, self.list_tools)
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        limit = timeout or connection.timeout
        if self.tasks.legacy and await self._legacy_task(name, task):
            with connection.progress_token(progress) as token:  # while this call waits
                started = await self.tasks.start_legacy(params, timeout, token)
                if isinstance(started, ToolTask) and not task:
                    started = await self.tasks.run(started, limit)
            if isinstance(started, ToolTask):
                return started
            return await self.unwrap.result(name, started, self.list_tools)
        try:
            result = await connection.request(
                "tools/call", params, timeout=timeout, progress=progress, tasks=task
            )
        except McpError as exc:
            if task or connection.core.era != "modern" or not tasks_required(exc):
                raise
            result = await connection.request(
                "tools/call", params, timeout=timeout, progress=progress, tasks=True
            )
            if isinstance(result, x.CreateTaskResult):
                result = await self.tasks.run(ToolTask(self.tasks, result), limit)
        if task and isinstance(result, x.CreateTaskResult):
            return ToolTask(self.tasks, result)
        return await self.unwrap.result(name, cast(t.CallToolResult, result), self.list_tools)

    async def _legacy_task(self, name: str, asked: bool) -> bool:
        """Whether a 2025-11-25 call of `name` is task-augmented: the tool runs only
        as a task, or may and the caller asked (tools listed once if `name` is new)."""
        support = self.connection.core.task_support
        if name not in support:
            with contextlib.suppress(McpError):
                await self.list_tools(refresh=True)
        found = support.get(name, "forbidden")
        return found == "required" or (asked and found == "optional")

    async def list_resources(
        self, cursor: str | None = None, **options: Unpack[PageOptions]
    ) -> list[t.Resource]:
        """The server's resources, every page unless `all_pages=False`."""
        return await self._pages("resources/list", "resources", cursor, options)

    async def list_resource_templates(
        self, cursor: str | None = None, **options: Unpack[PageOptions]
    ) -> list[t.ResourceTemplate]:
        """The server's resource templates, every page unless `all_pages=False`."""
        method, field = "resources/templates/list", "resource_templates"
        return await self._pages(method, field, cursor, options)

    async def read_resource(
        self, uri: str, *, refresh: bool = False, timeout: float | None = None
    ) -> ReadResult:
        """Read the resource at `uri` (maybe from the cache): text or blob contents (ReadResult)."""
        fetch = functools.partial(self.request, "resources/read", {"uri": uri}, timeout=timeout)
        read = await cached(self.cache, ("resources/read", uri), fetch, refresh)
        return concrete(cast(t.ReadResourceResult, read))

    async def read_app(self, app: str | t.Tool) -> App:
        """An MCP App by its `ui://` URI or through a tool linked to one (`tool_app`):
        its HTML and what the server asks of the frame that shows it."""
        return await read_app(self.read_resource, app)

    async def list_prompts(
        self, cursor: str | None = None, **options: Unpack[PageOptions]
    ) -> list[t.Prompt]:
        """The server's prompts and their arguments, every page unless `all_pages=False`."""
        return await self._pages("prompts/list", "prompts", cursor, options)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> t.GetPromptResult:
        """Get prompt `name` filled with `arguments`: its messages."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return cast(t.GetPromptResult, await self.request("prompts/get", params, timeout=timeout))

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> t.CompleteResult:
        """Argument completion; `ref` is {"type": "ref/prompt", "name": ...} or
        {"type": "ref/resource", "uri": ...}."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params, timeout=timeout)
        return cast(t.CompleteResult, result)

    async def set_log_level(self, level: str) -> None:
        """Legacy sessions: the session-wide level. Modern: the level sent on every request."""
        if self.connection.core.era == "legacy":
            await self.request("logging/setLevel", {"level": level})
        else:
            self.connection.core.log_level = level

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> AsyncIterator[Note]:
        """Change notifications as typed structs until the server ends the stream or you
        stop iterating. Modern: `subscriptions/listen`; legacy: session notifications.
        `task_ids` (modern only): `notifications/tasks` (TaskStatusNotification) for
        those tasks, each carrying the task's whole status."""
        wanted = (tools, prompts, resources, resource_uris, task_ids)
        async for note in changes(self.connection, *wanted):
            yield note
