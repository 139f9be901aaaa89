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

import contextlib
import functools
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, Unpack, cast, overload

import msgspec

from mcpgen import _callbacks as cb
from mcpgen._api_apps import App, app_capabilities, read_app
from mcpgen._api_lists import ReadResult, cached, concrete, header_checked, pages
from mcpgen._api_options import ClientOptions
from mcpgen._api_tasks import DEFAULT_TASK_TIMEOUT, Tasks, ToolTask
from mcpgen._client import ClientCore, VerdictCache, shared_verdicts
from mcpgen._client._cache import ResultCache
from mcpgen._connection import Connection, Era, Note
from mcpgen._errors import ConfigurationError, McpError
from mcpgen._listen import changes
from mcpgen._wrap import unwrap_schema, wrapped
from mcpgen.telemetry import instrument_client
from mcpgen.transports._link_base import Link
from mcpgen.transports._links import HttpLink, MemoryLink, SseLink, StdioLink
from mcpgen.transports._port import ServerPort
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

if TYPE_CHECKING:
    import httpx

__all__ = ["Client", "ClientOptions"]


class Client:
    """An MCP client over one link (stdio process, HTTP endpoint, in-memory server).

    It holds a `Connection` (the I/O), a `Tasks` helper (the task requests), its
    callbacks and its result cache. `verdicts`: where era probes' verdicts are cached
    (each trusted for its TTL); by default one cache shared by the process.
    `telemetry=True` (or `MCPGEN_OTEL=1`): OpenTelemetry spans and metrics.
    `extensions`: extensions this application handles, declared in the client's
    capabilities; `apps=True` declares MCP Apps (`io.modelcontextprotocol/ui`): the
    application renders apps (`read_app`), so servers may link tools to them.
    """

    def __init__(
        self,
        link: Link,
        *,
        era: Era = "auto",
        name: str = "mcpgen-client",
        version: str = "0.1.0",
        on_elicitation: cb.ElicitationCallback | None = None,
        on_sampling: cb.SamplingCallback | None = None,
        on_roots: cb.RootsCallback | None = None,
        on_log: cb.LogCallback | None = None,
        elicitation_modes: Sequence[str] = ("form",),
        log_level: str | None = None,
        timeout: float = 60.0,
        probe_timeout: float = 5.0,
        max_rounds: int = 8,
        cache: bool = True,
        verdicts: VerdictCache | None = None,
        telemetry: bool | None = None,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        apps: bool = False,
    ) -> None:
        self.callbacks = cb.Callbacks(
            on_elicitation=on_elicitation,
            on_sampling=on_sampling,
            on_roots=on_roots,
            on_log=on_log,
            elicitation_modes=elicitation_modes,
        )
        caps, legacy_caps = self.callbacks.capabilities()
        declared = {**(app_capabilities() if apps else {}), **(extensions or {})}
        if declared:  # extensions the application handles itself (apps: it renders them)
            caps["extensions"] = legacy_caps["extensions"] = {
                k: dict(v) for k, v in declared.items()
            }
        core = ClientCore(
            t.Implementation(name=name, version=version),
            caps,
            log_level=log_level,
            legacy_capabilities=legacy_caps,
        )
        self.cache = ResultCache(cache)
        # Tools listed, and those whose non-object results come wrapped (`_unwrapped`).
        self.listed_tools: set[str] = set()
        self.wrapped_tools: set[str] = set()
        self.connection = Connection(
            link,
            core,
            self.callbacks,
            self.cache,
            shared_verdicts() if verdicts is None else verdicts,
            era=era,
            timeout=timeout,
            probe_timeout=probe_timeout,
            max_rounds=max_rounds,
        )
        self.connection.refresh_tools = self._refresh_tools
        self.tasks = Tasks(self.connection, self.callbacks)
        instrument_client(self.connection, telemetry)  # a no-op unless telemetry is on

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        **options: Unpack[ClientOptions],
    ) -> Client:
        """A client of a server subprocess (stdin/stdout)."""
        return cls(StdioLink(command, env=env, cwd=cwd), **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        httpx_client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
        **options: Unpack[ClientOptions],
    ) -> Client:
        """A client of a Streamable HTTP endpoint (`headers`: e.g. Authorization; `auth`:
        an httpx.Auth such as `mcpgen.auth.OAuth`, or give `httpx_client` its own)."""
        timeout = options.get("timeout", 60.0)
        return cls(HttpLink(url, headers, httpx_client, timeout, auth), **options)

    @classmethod
    def sse(
        cls,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        httpx_client: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
        **options: Unpack[ClientOptions],
    ) -> Client:
        """A client of a server on the deprecated HTTP+SSE transport (2024-11-05): `url`
        is its SSE stream. Legacy era only (`Client.http` also reaches such servers, as
        the last step of era detection)."""
        if options.get("era", "legacy") not in ("legacy", "auto"):
            raise ConfigurationError("the HTTP+SSE transport predates the modern era")
        options["era"] = "legacy"
        link = SseLink(url, headers, httpx_client, options.get("timeout", 60.0), auth=auth)
        return cls(link, **options)

    @classmethod
    def memory(cls, server: ServerPort, **options: Unpack[ClientOptions]) -> Client:
        """A client of an `mcpgen.Server` in this process."""
        return cls(MemoryLink(server), **options)

    # -- the connection ---------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        await self.connection.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.connection.close()

    async def close(self) -> None:
        await self.connection.close()

    @property
    def link(self) -> Link:
        """The transport link in use (era detection may replace the one given)."""
        return self.connection.link

    @property
    def core(self) -> ClientCore:
        return self.connection.core

    @property
    def era(self) -> str | None:
        return self.connection.core.era

    @property
    def protocol_version(self) -> str:
        return self.connection.core.version

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.connection.core.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.connection.core.server_capabilities

    @property
    def timeout(self) -> float:
        return self.connection.timeout

    @property
    def on_log(self) -> cb.LogCallback | None:
        return self.callbacks.on_log

    @on_log.setter
    def on_log(self, callback: cb.LogCallback | None) -> None:
        self.callbacks.on_log = callback

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

    async def cancel_task(self, task_id: str) -> None:
        """`tasks/cancel` (see `Tasks.cancel_task`)."""
        await self.tasks.cancel_task(task_id)

    async def wait_task(
        self,
        task: ToolTask | str,
        *,
        timeout: float | None = DEFAULT_TASK_TIMEOUT,
        poll: float | None = None,
    ) -> t.CallToolResult:
        """Poll the task until it ends; its CallToolResult (see `Tasks.wait_task`)."""
        return await self.tasks.wait_task(task, timeout=timeout, poll=poll)

    # -- caching ----------------------------------------------------------------------------------
    async def _refresh_tools(self) -> None:
        await self.list_tools(refresh=True)

    async def _pages(
        self, method: str, field: str, cursor: str | None, all_pages: bool, refresh: bool
    ) -> list[Any]:
        return await pages(self.cache, self.request, method, field, cursor, all_pages, refresh)

    async def list_tools(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Tool]:
        tools = await self._pages("tools/list", "tools", cursor, all_pages, refresh)
        tools = [self._unwrapped(tool) for tool in tools]
        return header_checked(self.connection, tools) if self.link.http else tools

    def _unwrapped(self, tool: t.Tool) -> t.Tool:
        """`tool` with the output schema of what it returns: a non-object result wrapped
        as `{"result": ...}` for an older revision (`mcpgen._wrap`) is unwrapped."""
        self.listed_tools.add(tool.name)
        if not wrapped(tool.output_schema):
            self.wrapped_tools.discard(tool.name)
            return tool
        self.wrapped_tools.add(tool.name)
        schema = unwrap_schema(cast(dict[str, Any], tool.output_schema))
        return msgspec.structs.replace(tool, output_schema=schema)

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

        `task=True` declares the Tasks extension on this request: the server may then
        run the call as a task, and you get a `ToolTask` (`await handle.result()`),
        or answer directly with the CallToolResult. A legacy session has no tasks: the
        call is an ordinary one (a tool that runs only as a task refuses it).
        """
        connection = self.connection
        if (
            connection.link.http
            and connection.core.era == "modern"
            and name not in connection.tool_headers
        ):
            with contextlib.suppress(McpError):
                await self.list_tools()
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        result = await connection.request(
            "tools/call", params, timeout=timeout, progress=progress, tasks=task
        )
        if task and isinstance(result, x.CreateTaskResult):
            return ToolTask(self.tasks, result)
        return await self._result_unwrapped(name, cast(t.CallToolResult, result))

    async def _result_unwrapped(self, name: str, result: t.CallToolResult) -> t.CallToolResult:
        """`result` with a wrapped non-object structured value unwrapped (see `_unwrapped`;
        the tools are listed first when this one was not)."""
        content = result.structured_content
        if not (isinstance(content, dict) and content.keys() == {"result"}):
            return result
        if name not in self.listed_tools:
            with contextlib.suppress(McpError):
                await self.list_tools()
        if name not in self.wrapped_tools:
            return result
        return msgspec.structs.replace(result, structured_content=content["result"])

    async def list_resources(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Resource]:
        return await self._pages("resources/list", "resources", cursor, all_pages, refresh)

    async def list_resource_templates(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.ResourceTemplate]:
        method, field = "resources/templates/list", "resource_templates"
        return await self._pages(method, field, cursor, all_pages, refresh)

    async def read_resource(self, uri: str, *, refresh: bool = False) -> ReadResult:
        """Read a resource: its contents, each a `TextResourceContents` or a
        `BlobResourceContents` (see `ReadResult`)."""
        fetch = functools.partial(self.request, "resources/read", {"uri": uri})
        read = await cached(self.cache, ("resources/read", uri), fetch, refresh)
        return concrete(cast(t.ReadResourceResult, read))

    async def read_app(self, app: str | t.Tool) -> App:
        """An MCP App by its `ui://` URI or through a tool linked to one (`tool_app`):
        its HTML and what the server asks of the frame that shows it."""
        return await read_app(self.read_resource, app)

    async def list_prompts(
        self, cursor: str | None = None, *, all_pages: bool = True, refresh: bool = False
    ) -> list[t.Prompt]:
        return await self._pages("prompts/list", "prompts", cursor, all_pages, refresh)

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
    ) -> AsyncIterator[Note]:
        """Change notifications as typed structs until the server ends the stream or you
        stop iterating. Modern: `subscriptions/listen`; legacy: session notifications.
        `task_ids` (modern only): `notifications/tasks` (TaskStatusNotification) for
        those tasks, each carrying the task's whole status."""
        wanted = (tools, prompts, resources, resource_uris, task_ids)
        async for note in changes(self.connection, *wanted):
            yield note
