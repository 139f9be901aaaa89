"""The public asyncio Client: every server in the field, one typed API.

    async with Client.stdio(["python", "server.py"]) as client:   # or .http / .sse / .memory
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})

Era `auto` (default) probes with `server/discover` and falls back to `initialize`
for legacy servers (over HTTP, then to the deprecated HTTP+SSE transport if the
endpoint refuses POSTs); `modern` pins 2026-07-28; `legacy` goes straight to the
handshake. Input requests (elicitation, sampling, roots) are answered by the
callbacks you pass, whether they arrive as input-required results (modern) or as
server-to-client requests (legacy).

Tasks (the `io.modelcontextprotocol/tasks` extension, modern era): `call_tool(...,
task=True)` may return a `ToolTask` to wait for (see `mcpgen._api_tasks`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, Literal, cast, overload

from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._api_tasks import TaskClient, ToolTask
from mcpgen._connection import Callback, log
from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen.transports._links import HttpLink, MemoryLink, StdioLink
from mcpgen.transports._sse_link import SseLink
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["Client"]


class Client(TaskClient):
    """An MCP client over one link (stdio process, HTTP endpoint, in-memory server)."""

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> Client:
        """A client of a server subprocess (stdin/stdout)."""
        return cls(StdioLink(command, env=env, cwd=cwd), **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        httpx_client: Any = None,
        **options: Any,
    ) -> Client:
        """A client of a Streamable HTTP endpoint (`headers`: e.g. Authorization)."""
        return cls(HttpLink(url, headers, httpx_client, options.get("timeout", 60.0)), **options)

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        httpx_client: Any = None,
        **options: Any,
    ) -> Client:
        """A client of a server on the deprecated HTTP+SSE transport (2024-11-05): `url`
        is its SSE stream. Legacy era only (`Client.http` also reaches such servers, as
        the last step of era detection)."""
        if options.get("era", "legacy") not in ("legacy", "auto"):
            raise ConfigurationError("the HTTP+SSE transport predates the modern era")
        options["era"] = "legacy"
        return cls(SseLink(url, headers, httpx_client, options.get("timeout", 60.0)), **options)

    @classmethod
    def memory(cls, server: Any, **options: Any) -> Client:
        """A client of an `mcpgen.Server` in this process."""
        return cls(MemoryLink(server), **options)

    async def _refresh_tools(self) -> None:
        await self.list_tools(refresh=True)

    async def _pages(
        self, method: str, field: str, cursor: str | None, all_pages: bool, refresh: bool
    ) -> Any:
        items: list[Any] = []
        while True:
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}

            def fetch(p: dict[str, Any] = params) -> Awaitable[Any]:
                return self.request(method, p)

            page = await self._cached((method, cursor), fetch, refresh)
            items.extend(getattr(page, field))
            nxt = page.next_cursor
            if not all_pages or nxt is UNSET or nxt is None:
                return items
            cursor = nxt

    async def list_tools(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Tool]:
        tools = await self._pages("tools/list", "tools", cursor, all_pages, refresh)
        if not self.link.http:
            return cast(list[t.Tool], tools)
        kept = []
        for tool in tools:  # HTTP clients drop tools whose header annotations are invalid
            try:
                self._tool_headers[tool.name] = proto.mcp_header_params(tool.input_schema)
            except ValueError as exc:
                log.warning("dropping tool %r: %s", tool.name, exc)
                continue
            kept.append(tool)
        return kept

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callback | None = None,
        task: Literal[False] = False,
    ) -> t.CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callback | None = None,
        task: bool,
    ) -> t.CallToolResult | ToolTask: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callback | None = None,
        task: bool = False,
    ) -> t.CallToolResult | ToolTask:
        """Call a tool; its result, input rounds fulfilled by the callbacks.

        `task=True` declares the Tasks extension on this request: the server may then
        run the call as a task, and you get a `ToolTask` (`await handle.result()`),
        or answer directly with the CallToolResult. A legacy session has no tasks: the
        call is an ordinary one (a tool that runs only as a task refuses it).
        """
        if self.link.http and self.core.era == "modern" and name not in self._tool_headers:
            with contextlib.suppress(McpError):
                await self.list_tools()
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        result = await self.request(
            "tools/call", params, timeout=timeout, progress=progress, tasks=task
        )
        if task and isinstance(result, x.CreateTaskResult):
            return ToolTask(self, result)
        return cast(t.CallToolResult, result)

    async def list_resources(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Resource]:
        return cast(
            list[t.Resource],
            await self._pages("resources/list", "resources", cursor, all_pages, refresh),
        )

    async def list_resource_templates(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.ResourceTemplate]:
        return cast(
            list[t.ResourceTemplate],
            await self._pages(
                "resources/templates/list", "resource_templates", cursor, all_pages, refresh
            ),
        )

    async def read_resource(self, uri: str, *, refresh: bool = False) -> t.ReadResourceResult:
        return cast(
            t.ReadResourceResult,
            await self._cached(
                ("resources/read", uri),
                lambda: self.request("resources/read", {"uri": uri}),
                refresh,
            ),
        )

    async def list_prompts(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Prompt]:
        return cast(
            list[t.Prompt], await self._pages("prompts/list", "prompts", cursor, all_pages, refresh)
        )

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> t.GetPromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return cast(t.GetPromptResult, await self.request("prompts/get", params))

    async def complete(
        self, ref: dict[str, Any], argument: str, value: str, context: dict[str, str] | None = None
    ) -> t.CompleteResult:
        """Argument completion; `ref` is {"type": "ref/prompt", "name": ...} or
        {"type": "ref/resource", "uri": ...}."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return cast(t.CompleteResult, await self.request("completion/complete", params))

    async def set_log_level(self, level: str) -> None:
        """Legacy sessions: the session-wide level. Modern: the level sent on every request."""
        if self.core.era == "legacy":
            await self.request("logging/setLevel", {"level": level})
        else:
            self.core.log_level = level

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
    ) -> AsyncIterator[Any]:
        """Change notifications as typed structs until the server ends the stream or you
        stop iterating. Modern: `subscriptions/listen`; legacy: session notifications.
        `task_ids` (modern only): `notifications/tasks` (TaskStatusNotification) for
        those tasks, each carrying the task's whole status."""
        if task_ids and self.core.era != "modern":
            raise ConfigurationError("task notifications exist only in the modern era")
        if self.core.era == "legacy":
            async for note in self._legacy_listen(tools, prompts, resources, resource_uris):
                yield note
            return
        filters: dict[str, Any] = {}
        if tools:
            filters["toolsListChanged"] = True
        if prompts:
            filters["promptsListChanged"] = True
        if resources:
            filters["resourcesListChanged"] = True
        if resource_uris:
            filters["resourceSubscriptions"] = list(resource_uris)
        caps = None
        if task_ids:
            filters["taskIds"] = list(task_ids)
            caps = self.core.task_capabilities
        rid, sent, frame = self.core.request(
            "subscriptions/listen", {"notifications": filters}, capabilities=caps
        )
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._streams[rid] = queue
        try:
            await self.link.send(frame, self.core.headers("subscriptions/listen", sent), rid)
            first = await asyncio.wait_for(queue.get(), self.timeout)
            if not isinstance(first, t.SubscriptionsAcknowledgedNotification):
                raise ClientError(
                    f"subscriptions/listen: expected an acknowledgement first, got {first!r}"
                )
            while (note := await queue.get()) is not None:
                yield note
        finally:
            self._streams.pop(rid, None)
            if not self._closed:
                await self._cancel(rid)

    async def _legacy_listen(
        self, tools: bool, prompts: bool, resources: bool, uris: Sequence[str]
    ) -> AsyncIterator[Any]:
        wanted = {
            "notifications/tools/list_changed": tools,
            "notifications/prompts/list_changed": prompts,
            "notifications/resources/list_changed": resources,
            "notifications/resources/updated": bool(uris),
        }
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._session_events.append(queue)
        for uri in uris:
            await self.request("resources/subscribe", {"uri": uri})
        try:
            while (note := await queue.get()) is not None:
                method = (
                    note.get("method")
                    if isinstance(note, dict)
                    else type(note).__struct_config__.tag
                )
                if wanted.get(str(method)):
                    yield note
        finally:
            self._session_events.remove(queue)
            if not self._closed:
                for uri in uris:
                    with contextlib.suppress(Exception):
                        await self.request("resources/unsubscribe", {"uri": uri})
