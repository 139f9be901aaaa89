"""The public Server: how it is configured, the core it builds, composition, change
notifications and serving. Registering features (the decorators, `add_*`, `remove_*`)
is its base class's, `mcpgen.server._features.Features`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from mcpgen._errors import ConfigurationError
from mcpgen._server import CacheHint, Channel, Registry, ServerCore, Session
from mcpgen._server._bus import PROMPTS, RESOURCE, RESOURCES, TOOLS, ChangeEvent
from mcpgen._server._methods import read_own
from mcpgen._server._middleware import Middleware, added, adopted, serving
from mcpgen._server._state import Sealer
from mcpgen.server._features import Features
from mcpgen.server._mount import Watcher, holding, imported, mounting
from mcpgen.server._run import run_http, run_stdio
from mcpgen.server._setup import (
    core_options,
    implementation,
    redis_stores,
    served_stores,
    spawn,
    worker_threads,
)
from mcpgen.server._transform import TransformOptions, with_transformed
from mcpgen.stores import Bus, KeyRing, TaskStore
from mcpgen.telemetry import session_class
from mcpgen.transports._lifespan import Lifespan, LifespanFactory
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen.stores.redis import RedisStores
    from mcpgen.transports._http import McpAsgiApp

__all__ = ["Server"]


class Server(Features):
    """An MCP server for both eras: modern (2026-07-28, stateless) and legacy
    (`initialize` sessions, 2024-11-05 ... 2025-11-25), over any transport.

    Register tools, resources, resource templates, prompts and completions with the
    decorators; handlers may be sync or async and may take a `Context` parameter.
    Tools registered with `task=` may run as tasks (the Tasks extension), advertising
    `task_ttl_seconds` and `task_poll_seconds`; one client may have
    `max_tasks_per_client` running at once (None: no bound; past it, -32029).

    Shared state sits behind the interfaces of `mcpgen.stores`, in this process by
    default: `bus`, `task_store` and `keys` (sealing requestState and cursors; or
    `state_keys`, or `MCPGEN_STATE_KEYS`, secrets newest first) take shared ones.
    `redis` (or `MCPGEN_REDIS_URL`; the `redis` extra) puts sessions, events, tasks and
    the bus in Redis so any worker serves any request (every worker then needs the same
    state keys); startup fails with the reason when Redis does not answer.

    Sync handlers run in a bounded pool of worker threads (`sync_workers`; default
    min(32, CPUs + 4); 0: on the event loop's thread, as `threaded=False` does for one
    handler). `lifespan`: `fn(server)` returning an async context manager entered once
    around serving; what it yields is `ctx.lifespan`. `mask_errors` (default on): an
    unexpected handler exception reaches the client as a reference (`(ref 1f3a9c2e)`),
    its traceback is logged under it; False sends its text. `telemetry=True` (or
    `MCPGEN_OTEL=1`): OpenTelemetry spans and metrics (`mcpgen.telemetry`).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
        description: str | None = None,
        website_url: str | None = None,
        icons: list[t.Icon] | None = None,
        page_size: int = 200,
        cache: Mapping[str, CacheHint] | None = None,
        mask_errors: bool = True,
        logging: bool = True,
        state_keys: list[bytes | str] | None = None,
        state_ttl_seconds: float = 900.0,
        bus: Bus | None = None,
        keys: KeyRing | None = None,
        task_store: TaskStore | None = None,
        extensions: Mapping[str, dict[str, Any]] | None = None,
        task_ttl_seconds: float | None = 3600.0,
        task_poll_seconds: float = 1.0,
        max_tasks_per_client: int | None = 100,
        sync_workers: int | None = None,
        lifespan: LifespanFactory | None = None,
        redis: str | RedisStores | None = None,
        telemetry: bool | None = None,
        middleware: Sequence[Middleware] = (),
    ) -> None:
        self._core_options = core_options(
            page_size,
            cache,
            mask_errors,
            logging,
            task_ttl_seconds,
            task_poll_seconds,
            max_tasks_per_client,
        )
        self.info = implementation(name, version, title, description, website_url, icons)
        self.instructions = instructions
        self._extensions = dict(extensions or {})
        if keys is not None and state_keys:
            raise ConfigurationError("pass either keys or state_keys, not both")
        self.redis = redis_stores(redis, keys is not None or bool(state_keys))
        if self.redis is not None:
            bus, task_store = bus or self.redis.bus, task_store or self.redis.tasks
            lifespan = self.redis.checked(lifespan)
        self._bus = bus
        self._sealer = Sealer(keys or state_keys, ttl_seconds=state_ttl_seconds)
        self._task_store = task_store
        self._registry = Registry()
        self._core: ServerCore | None = None
        self._threads = worker_threads(sync_workers)
        self._lifespan_value: Any = None
        # Found by the transports (`lifespan_of`): they hold it while they serve.
        self.lifecycle = None if lifespan is None else Lifespan(lifespan, self, self._entered)
        self._session_type = session_class(telemetry)
        self._middleware = [adopted(m, self) for m in middleware]
        self._watchers: list[Watcher] = []  # the servers this one is mounted in

    @property
    def core(self) -> ServerCore:
        """The running core; building it freezes the registry snapshot."""
        if self._core is None:
            self._core = ServerCore(
                self.info,
                instructions=self.instructions,
                registry=self._registry,
                sealer=self._sealer,
                extensions=self._extensions,
                bus=self._bus,
                spawn=spawn,
                loop=asyncio.get_running_loop,
                task_store=self._task_store,
                run_sync=self._threads,
                read=read_own,
                **self._core_options,
            )
            self._core.lifespan = self._lifespan_value
            self._core.use(*serving(self._middleware))
        return self._core

    def add_middleware(self, middleware: Middleware) -> None:
        """Add `middleware` inside those added before (docs/guide/middleware.md)."""
        added(self._middleware, middleware, self, self._core)

    def _entered(self, value: Any) -> None:
        """The lifespan yielded `value` (None: it has exited)."""
        self._lifespan_value = value
        if self._core is not None:
            self._core.lifespan = value

    def session(self, channel: Channel | None = None) -> Session:
        """A new connection-scoped protocol session (transports call this)."""
        return self._session_type(self.core, channel)

    def freeze(self) -> None:
        """Build the core now, freezing the registry snapshot (an HTTP app does this at
        startup; later registrations swap in a new snapshot and notify clients)."""
        _ = self.core

    # -- change notifications ------------------------------------------------------------------
    def _publish(self, event: ChangeEvent) -> None:
        self.core.bus.publish(event)
        for watcher in self._watchers:
            watcher.published(event)

    # -- composition (docs/guide/composition.md) --------------------------------------------------
    def mount(self, server: Server, namespace: str | None = None) -> None:
        """Serve `server`'s features from this one, live, as `namespace_name` and
        `scheme://namespace/rest`, its lifespan entered with this one's; a name or URI
        taken raises ConfigurationError (docs/guide/composition.md)."""
        mounted, registry = mounting(self, server, namespace)
        self._swap_all(registry)
        server._watchers.append(mounted)
        if server.lifecycle is not None:
            self.lifecycle = holding(self.lifecycle, server.lifecycle, self, self._entered)

    def import_server(self, server: Server, namespace: str | None = None) -> None:
        """Copy `server`'s entries into this one once, renamed as `mount` does; later
        changes to `server` are not seen, and its lifespan is not entered."""
        self._swap_all(imported(self, server, namespace))

    def _swap_all(self, registry: Registry) -> None:
        for kind in (TOOLS, PROMPTS, RESOURCES):  # one snapshot, each list announced
            self._swap(kind, registry)

    def add_transformed_tool(
        self, source: str, name: str, *, replace: bool = False, **changes: Unpack[TransformOptions]
    ) -> None:
        """Register the tool `name` made from the tool `source` (`TransformOptions`: title,
        description, rename, describe, hide, result); `replace=True` removes `source`."""
        self._swap(TOOLS, with_transformed(self._registry, source, name, replace, **changes))

    def notify_tools_changed(self) -> None:
        """Tell listening clients that the tool list changed."""
        self._publish(ChangeEvent(TOOLS))

    def notify_prompts_changed(self) -> None:
        """Tell listening clients that the prompt list changed."""
        self._publish(ChangeEvent(PROMPTS))

    def notify_resources_changed(self) -> None:
        """Tell listening clients that the resource list changed."""
        self._publish(ChangeEvent(RESOURCES))

    def notify_resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to `uri` that the resource changed."""
        self._publish(ChangeEvent(RESOURCE, uri))

    def close(self) -> None:
        """Graceful shutdown of the core: every open listen stream gets its final result
        and every unfinished task is cancelled."""
        if self._core is not None:
            self._core.close()
        if self._threads is not None:
            self._threads.close()  # workers end after their current job; not waited for

    # -- serving ---------------------------------------------------------------------------------
    def asgi_app(self, **options: Any) -> McpAsgiApp:
        """The Streamable HTTP endpoint (and the deprecated HTTP+SSE one) as an ASGI 3
        app, to mount in any ASGI server or framework. Options: see
        `mcpgen.transports.HttpOptions` (path, sse_path, messages_path, max_body,
        keepalive_seconds, dns_rebinding_protection, allowed_hosts, allowed_origins ...),
        plus `store` (a SessionStore) and `events` (an EventStore) for legacy sessions,
        and `auth` (`mcpgen.auth.AuthSettings`: OAuth bearer tokens, scopes per feature).

        Mounted under a prefix (Starlette's `Mount("/weather", app=...)`, FastAPI's
        `app.mount(...)`), it serves `/weather/mcp`, `/weather/sse` and `/weather/messages`
        (`root_path`). A mounted app gets no lifespan events: the registry is frozen at
        the first request instead, and the host app's shutdown may `await app.shutdown()`
        to end open streams first."""
        from mcpgen.transports._http import HttpOptions, McpAsgiApp  # noqa: PLC0415 (lazy)

        store, events, auth = served_stores(self.redis, options)
        if auth is not None and auth.hide_unauthorized:
            self._update("", hide_unauthorized=True)
        return McpAsgiApp(self, HttpOptions(**options), store, events, auth)

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        log_level: str = "warning",
        **options: Any,
    ) -> None:
        """Serve until stopped: `stdio` (until EOF on stdin) or `http` (uvicorn, one worker;
        the URLs it serves are printed on stderr once it listens, with the port it really
        bound when `port=0`). When the lifespan fails to start, nothing is served: the
        process exits with the error's message (status 1). SIGTERM or Ctrl-C stops an
        HTTP server after one line on stderr saying so.

        Args:
            transport: `"stdio"` or `"http"`.
            host: HTTP: the address to listen on.
            port: HTTP: the port (0: any free one).
            log_level: HTTP: uvicorn's log level.
            **options: HTTP: the endpoint's options, as `asgi_app` takes them.

        Raises:
            ConfigurationError: An unknown transport; or the call was made while
                `mcpgen serve` imports the module (guard it with
                `if __name__ == "__main__":`).
        """
        if transport == "stdio":
            run_stdio(self)
        elif transport == "http":
            run_http(self.asgi_app(**options), host, port, log_level)
        else:
            raise ConfigurationError(f"unknown transport {transport!r}: use 'stdio' or 'http'")
