"""The public asyncio `Client`: every server in the field, one typed API (the package
docstring, `mcpgen.client`, shows it at work and names the modules behind it)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, Unpack, cast, overload

import msgspec

from mcpgen._client import ClientCore, VerdictCache, shared_verdicts
from mcpgen._client._cache import ResultCache
from mcpgen._errors import ConfigurationError
from mcpgen.client import _callbacks as cb
from mcpgen.client._apps import App, declared, read_app
from mcpgen.client._connection import Connection, Era, Note
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
from mcpgen.client._middleware import ClientMiddleware, RetryPolicy, install
from mcpgen.client._options import ClientOptions, PageOptions
from mcpgen.client._tasks import DEFAULT_TASK_TIMEOUT, Tasks, ToolTask
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
    `timeout`: seconds per request (each call may pass its own), then `RequestTimeoutError`;
    `middleware` (first outermost) and `retry` (a `RetryPolicy`): docs/guide/clients.md.
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
        middleware: Sequence[ClientMiddleware] = (),
        retry: RetryPolicy | None = None,
    ) -> None:
        self.callbacks = cb.Callbacks(
            on_elicitation=on_elicitation,
            on_sampling=on_sampling,
            on_roots=on_roots,
            on_log=on_log,
            elicitation_modes=elicitation_modes,
        )
        caps, legacy_caps = declared(self.callbacks.capabilities(), apps, extensions)
        core = ClientCore(
            t.Implementation(name=name, version=version),
            caps,
            log_level=log_level,
            legacy_capabilities=legacy_caps,
        )
        self.cache, self.unwrap = ResultCache(cache), Unwrapper()  # see Unwrapper
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
        self.connection.refresh_tools = functools.partial(self.list_tools, refresh=True)
        self.tasks = Tasks(self.connection, self.callbacks)
        instrument_client(self.connection, telemetry)  # a no-op unless telemetry is on
        self.middleware: list[ClientMiddleware] = list(middleware)
        self._hooked = install(self.connection, self.middleware, retry)

    def add_middleware(self, middleware: ClientMiddleware) -> None:
        """Add `middleware` around every later request, inside those added before it."""
        self.middleware.append(middleware)
        if not self._hooked:
            self._hooked = install(self.connection, self.middleware, None)

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
        """A client of a Streamable HTTP endpoint; `async with` it to connect.

        Args:
            url: The endpoint, e.g. `http://127.0.0.1:8000/mcp`.
            headers: Sent with every request (e.g. `Authorization`).
            httpx_client: An `httpx.AsyncClient` of your own (TLS settings, proxies);
                the client then uses it as it is.
            auth: An `httpx.Auth`, such as `mcpgen.auth.OAuth(...)`.
            **options: The client's options (`era`, `timeout`, the callbacks, ...).
        """
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
        """Close the connection (stops a stdio server); `async with` does it for you."""
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
        """`"modern"` or `"legacy"` once connected (None before)."""
        return self.connection.core.era

    @property
    def protocol_version(self) -> str:
        """The protocol revision in use, e.g. `"2026-07-28"`."""
        return self.connection.core.version

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's name, version and the rest of its implementation info."""
        return self.connection.core.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """What the server declared it offers (tools, resources, prompts ...)."""
        return self.connection.core.server_capabilities

    @property
    def timeout(self) -> float:
        """Seconds a request waits for its answer unless the call says otherwise."""
        return self.connection.timeout

    @property
    def on_log(self) -> cb.LogCallback | None:
        """The callback given the server's log messages (None: they are dropped)."""
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
        return header_checked(self.connection, tools) if self.link.http else tools

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

        Args:
            name: The tool's name.
            arguments: Its arguments, a JSON object (none: `{}`).
            timeout: Seconds to wait for the answer (default: the client's `timeout`).
            progress: Called with `progress, total, message` as the server reports them.
            task: Declare the Tasks extension on this call.

        Returns:
            The result (a tool's own failure is a result with `is_error` set), or a
            `ToolTask` when the server made the call a task.

        Raises:
            McpError: The server answered with a JSON-RPC error (an unknown tool,
                invalid arguments).
            TransportError: The connection failed, timed out or closed.
        """
        connection = self.connection
        await headers_known(connection, name, self.list_tools)
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        result = await connection.request(
            "tools/call", params, timeout=timeout, progress=progress, tasks=task
        )
        if task and isinstance(result, x.CreateTaskResult):
            return ToolTask(self.tasks, result)
        return await self.unwrap.result(name, cast(t.CallToolResult, result), self.list_tools)

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
