"""The public asyncio `Client`: how it is made for each transport, its connection, and
what it knows of the server. What it asks of the server is its base class's,
`mcpgen.client._requests.Requests` (the package docstring, `mcpgen.client`, shows it at
work and names the modules behind it)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, Unpack

from mcpgen._client import ClientCore, VerdictCache, shared_verdicts
from mcpgen._client._cache import ResultCache
from mcpgen._errors import ConfigurationError
from mcpgen.client import _callbacks as cb
from mcpgen.client._apps import declared
from mcpgen.client._connection import Connection, Era
from mcpgen.client._lists import (
    Unwrapper,
)
from mcpgen.client._middleware import ClientMiddleware, RetryPolicy, install
from mcpgen.client._options import ClientOptions
from mcpgen.client._requests import Requests
from mcpgen.client._tasks import Tasks
from mcpgen.telemetry import instrument_client
from mcpgen.transports._link_base import Link
from mcpgen.transports._links import HttpLink, MemoryLink, SseLink, StdioLink
from mcpgen.transports._port import ServerPort
from mcpgen_types import latest as t

if TYPE_CHECKING:
    import httpx

__all__ = ["Client", "ClientOptions"]


class Client(Requests):
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
