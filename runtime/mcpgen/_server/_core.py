"""The server core shared by every connection: configuration, the frozen registry
snapshot, result stamping, cached list pages and the fan-out of bus events.

Registries are immutable snapshots. Registration before serving builds the first one;
a change after serving has started (`Server.add_tool` ...) swaps in a new snapshot,
which drops every cached encoding, and publishes the matching list-changed event.

Collaborators get narrow things, never the core: the task runner gets its store, the
spawn function, the bus's `publish` and the mask-errors flag. The core subscribes to the
bus once and hands each event to its listen streams and legacy sessions.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal, Protocol, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from mcpgen._errors import McpError
from mcpgen._jsonrpc import result_frame
from mcpgen._protocol import (
    INVALID_PARAMS,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    SUPPORTED,
    downgrade,
)
from mcpgen._server._bridge import Loop, loop_sleep
from mcpgen._server._bus import PROMPTS, RESOURCE, RESOURCES, TOOLS, Listener
from mcpgen._server._call import Call, Channel, Pending
from mcpgen._server._defs import CompletionDef, PromptDef, ResourceDef, TemplateDef, ToolDef
from mcpgen._server._state import Sealer
from mcpgen._server._task_runner import TaskRunner
from mcpgen._server._tasks import TASKS, Spawn, input_of
from mcpgen.stores import (
    Bus,
    BusEvent,
    ChangeEvent,
    InMemoryBus,
    InMemoryTaskStore,
    ReplyEvent,
    TaskEvent,
    TaskStore,
)
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["CacheHint", "LegacySession", "Registry", "ServerCore", "SyncRunner"]

_encode = msgspec.json.Encoder().encode
CACHEABLE = tuple(m for m, info in t.METHODS.items() if info.cacheable)


class CacheHint(msgspec.Struct, frozen=True):
    """How long a client may reuse the result of one cacheable method, and for whom:
    `Server(cache={"tools/list": CacheHint(ttl_ms=60_000, scope="public")})`. In the
    2026-07-28 era the server writes it into each such result as `ttlMs` and
    `cacheScope`; legacy results carry neither."""

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"  # "public": results never depend on who asks


class Registry(msgspec.Struct, frozen=True):
    tools: dict[str, ToolDef] = msgspec.field(default_factory=dict)
    resources: dict[str, ResourceDef] = msgspec.field(default_factory=dict)
    templates: tuple[TemplateDef, ...] = ()
    prompts: dict[str, PromptDef] = msgspec.field(default_factory=dict)
    completions: dict[tuple[str, str], CompletionDef] = msgspec.field(default_factory=dict)
    fallback_completion: CompletionDef | None = None
    # Reads of a URI no resource or template serves, never listed (a proxy: its upstream).
    fallback_resource: TemplateDef | None = None
    hide_unauthorized: bool = False  # lists leave out what the caller's token may not use


class LegacySession(Protocol):
    """What the core needs of a legacy session: to be handed change events (it decides,
    by its own subscriptions, whether to notify its client)."""

    def deliver(self, event: ChangeEvent, frame: bytes) -> None: ...


T = TypeVar("T")


class Chains(Protocol):
    """The middleware chains a core serves through (`_middleware.Chains`): the method
    table with each handler in its chain, a task's work, client notifications."""

    @property
    def methods(self) -> Mapping[str, Any]: ...

    def task_step(
        self, core: ServerCore, call: Call, work: Callable[[], Awaitable[Any]], /
    ) -> Awaitable[Any]: ...

    def notification(self, receiver: Any, frame: Any, channel: Channel, /) -> Pending: ...


class SyncRunner(Protocol):
    """Runs a sync handler away from the event loop (the I/O layer injects one: a
    bounded pool of worker threads). `fn` takes no arguments; `call` is the request
    when the handler was handed a `Context`, so that its notifications can be passed
    back to the loop's thread. The core awaits the result as it awaits an async
    handler's."""

    def __call__(self, fn: Callable[[], T], call: Call | None) -> Awaitable[T]: ...


class ServerCore:
    def __init__(
        self,
        info: t.Implementation,
        *,
        instructions: str | None,
        registry: Registry,
        sealer: Sealer,
        cache: dict[str, CacheHint],
        page_size: int,
        mask_errors: bool,
        logging: bool,
        extensions: dict[str, dict[str, Any]],
        bus: Bus | None = None,
        spawn: Spawn | None = None,
        task_store: TaskStore | None = None,
        task_ttl_ms: int | None = 3_600_000,
        task_poll_ms: int = 1000,
        max_tasks_per_client: int | None = None,
        loop: Callable[[], Loop] | None = None,
        run_sync: SyncRunner | None = None,
        read: Callable[[ServerCore, Call, str], Any] | None = None,
    ) -> None:
        self.info = info
        # None: sync handlers run inline, on the caller's thread.
        self.run_sync = run_sync
        # `resources/read` for a handler (`_methods.read_own`; passed in: no import cycle).
        self._read = read
        # What the server's lifespan yielded (`ctx.lifespan`), once it has been entered.
        self.lifespan: Any = None
        self.instructions = instructions
        self.sealer = sealer
        self.cache = {m: cache.get(m, CacheHint()) for m in CACHEABLE}
        self.page_size = page_size
        self.mask_errors = mask_errors
        self.logging = logging
        self.extensions = extensions
        self.server_meta: dict[str, Any] = {META_SERVER_INFO: msgspec.to_builtins(info)}
        self.listeners: dict[int, Listener] = {}
        self.closing = False  # shutting down: a listen stream opened now ends at once
        # Why updates of a URI cannot be delivered (a subscription to it is refused), or
        # None; None here: every URI may be subscribed to (the app notifies what it wants).
        self.undeliverable: Callable[[str], str | None] | None = None
        self.legacy_sessions: set[LegacySession] = set()
        self.bus: Bus = bus if bus is not None else InMemoryBus()
        self.registry = registry
        self.loop = loop  # the running event loop: legacy sessions' awaited input requests
        self.tasks = TaskRunner(
            task_store if task_store is not None else InMemoryTaskStore(),
            spawn=spawn,
            publish=self.bus.publish,
            mask_errors=mask_errors,
            ttl_ms=task_ttl_ms,
            poll_ms=task_poll_ms,
            max_running=max_tasks_per_client,
            sleep=loop_sleep(loop),
        )
        # The methods served (name -> `_methods.MethodSpec`): the plain table, or (`use`)
        # each in its middleware chain.
        self.methods: Mapping[str, Any] = {}  # set by `use` before serving
        self.chains: Chains | None = None
        self._unsubscribe = self.bus.subscribe(self.deliver)
        self._pages: dict[tuple[str, str, int, frozenset[str] | None], bytes] = {}
        self._discover: bytes | None = None
        self._caps: dict[str, Any] | None = None
        # revision -> (capabilities, info, instructions, its InitializeResult built from them)
        self.handshakes: dict[str, tuple[Any, Any, str | None, Any]] = {}
        self._features: dict[str, bool] = {}
        # Whether any feature needs a scope (else authorization judges nothing).
        self.scoped = scoped(registry)

    def use(self, methods: Mapping[str, Any], chains: Chains | None) -> None:
        """Serve `methods` (the plain table of `_methods`, or a table of middleware
        chains: then `chains`, None without middleware) from now on."""
        self.methods, self.chains = methods, chains
        self.tasks.step = None if chains is None else functools.partial(chains.task_step, self)

    def read_own(self, call: Call, uri: str) -> Any:
        """`resources/read` of one of this server's resources for a handler serving
        `call` (`ctx.read_resource`): a result, or a coroutine resolving to one."""
        if self._read is None:
            raise McpError(t.INTERNAL_ERROR, "this server core was built without a reader")
        return self._read(self, call, uri)

    # -- registry snapshots ---------------------------------------------------------------
    def swap(self, registry: Registry, changed: Iterable[str]) -> None:
        self.registry = registry
        self._pages.clear()
        self._discover = None
        self._caps = None
        self._features = {}
        self.scoped = scoped(registry)
        for kind in changed:
            if kind:
                self.bus.publish(ChangeEvent(kind))

    def capabilities(self) -> dict[str, Any]:
        """Server capabilities as builtins (converted to each revision's type on use);
        computed once per registry snapshot, so callers must not change the dict."""
        if self._caps is None:
            self._caps = self._capabilities()
        return self._caps

    def _capabilities(self) -> dict[str, Any]:
        r = self.registry
        caps: dict[str, Any] = {}
        if r.tools:
            caps["tools"] = {"listChanged": True}
        if r.resources or r.templates:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if r.prompts:
            caps["prompts"] = {"listChanged": True}
        if r.completions or r.fallback_completion:
            caps["completions"] = {}
        if self.logging:
            caps["logging"] = {}
        extensions = dict(self.extensions)
        if any(tool.task is not None for tool in r.tools.values()):
            extensions[TASKS] = {}
        if extensions:
            caps["extensions"] = extensions
        return caps

    def has_feature(self, method: str) -> bool:
        """Capability gating: a feature method is served only when advertised."""
        known = self._features.get(method)
        if known is None:
            known = self._features[method] = self._has_feature(method)
        return known

    def _has_feature(self, method: str) -> bool:
        prefix = method.split("/", 1)[0]
        caps = self.capabilities()
        if prefix == "tasks":
            return TASKS in caps.get("extensions", {})
        needed = {
            "tools": "tools",
            "prompts": "prompts",
            "resources": "resources",
            "completion": "completions",
        }
        feature = needed.get(prefix)
        return feature is None or feature in caps

    # -- results --------------------------------------------------------------------------
    def stamp(self, method: str, result: Any) -> Any:
        """Modern stamps: serverInfo in `_meta`, cache hints on cacheable results."""
        meta = result.meta
        if meta is UNSET:
            result.meta = self.server_meta
        elif META_SERVER_INFO not in meta:
            result.meta = {**meta, **self.server_meta}
        hint = self.cache.get(method)
        if hint is not None and hasattr(result, "ttl_ms"):
            result.ttl_ms = hint.ttl_ms
            result.cache_scope = hint.scope
        return result

    def legacy_call_result(self, tool_name: str, result: Any) -> Any:
        """A legacy session's result of a tool whose output schema is no object schema:
        its structured value wrapped as `{"result": ...}`, as its listed schema is
        (`mcpgen._wrap`), whatever the value's own shape."""
        tool = self.registry.tools.get(tool_name)
        if tool is None or not isinstance(result, t.CallToolResult):
            return result
        schema = tool.definition.output_schema
        if result.structured_content is UNSET or not isinstance(schema, dict):
            return result
        if schema.get("type") == "object":
            return result
        wrapped = {"result": result.structured_content}
        return msgspec.structs.replace(result, structured_content=wrapped)

    def check_subscription(self, uris: Iterable[str]) -> None:
        """Refuse (McpError, invalid params) a subscription to a URI whose updates this
        server cannot deliver (see `undeliverable`)."""
        check = self.undeliverable
        if check is None:
            return
        for uri in uris:
            reason = check(uri)
            if reason is not None:
                raise McpError(t.INVALID_PARAMS, reason, {"uri": uri})

    def encode_result(self, method: str, version: str, era: str, result: Any) -> Any:
        """The result as the era writes it: stamped (modern) or downgraded (legacy)."""
        if era == "modern":
            return self.stamp(method, result)
        return downgrade(version, method, result)

    def discover(self) -> bytes:
        if self._discover is None:
            hint = self.cache["server/discover"]
            result = t.DiscoverResult(
                supported_versions=list(SUPPORTED),
                capabilities=msgspec.convert(self.capabilities(), t.ServerCapabilities),
                instructions=UNSET if self.instructions is None else self.instructions,
                ttl_ms=hint.ttl_ms,
                cache_scope=hint.scope,
                meta=self.server_meta,
            )
            self._discover = _encode(result)
        return self._discover

    def page(
        self,
        method: str,
        version: str,
        era: str,
        cursor: str | None,
        items: list[Any],
        build: Callable[[list[Any], str | None], Any],
        variant: frozenset[str] | None = None,
    ) -> msgspec.Raw:
        """One page of a list, encoded once per (method, revision, offset, the scopes
        a caller lacks when its list leaves features out)."""
        offset = self.offset(method, cursor, items)
        key = (method, version, offset, variant)
        cached = self._pages.get(key)
        if cached is None:
            result = self.page_result(method, offset, items, build)
            cached = self._pages[key] = _encode(self.encode_result(method, version, era, result))
        return msgspec.Raw(cached)

    def offset(self, method: str, cursor: str | None, items: list[Any]) -> int:
        offset = 0 if cursor is None else self.sealer.open_cursor(method, cursor)
        if offset > len(items):
            raise McpError(INVALID_PARAMS, "invalid cursor")
        return offset

    def page_result(
        self,
        method: str,
        offset: int,
        items: list[Any],
        build: Callable[[list[Any], str | None], Any],
    ) -> Any:
        """The page at `offset` as a result struct (not encoded: middleware sees it)."""
        end = offset + self.page_size
        next_cursor = self.sealer.cursor(method, end) if end < len(items) else None
        return build(items[offset:end], next_cursor)

    # -- bus fan-out -------------------------------------------------------------------------
    def deliver(self, event: BusEvent) -> None:
        """Every bus event, from any worker: to this worker's streams that want it."""
        if type(event) is ChangeEvent:
            for listener in list(self.listeners.values()):
                if listener.wants(event):
                    note = change_notification(event, listener.request_id)
                    listener.channel.notify(_encode(note))
            if self.legacy_sessions:
                frame = _encode(change_notification(event, None))
                for session in list(self.legacy_sessions):
                    session.deliver(event, frame)
        elif type(event) is TaskEvent:
            self.tasks.observe(event)
            for listener in list(self.listeners.values()):
                if listener.follows(event.task_id):
                    params = {**event.detail, "_meta": {META_SUBSCRIPTION_ID: listener.request_id}}
                    status = x.TaskStatusNotification(
                        params=msgspec.convert(params, x.TaskStatusNotificationParams)
                    )
                    listener.channel.notify(_encode(status))
        elif type(event) is ReplyEvent:  # a legacy client's answer: the transport's, unless
            found = input_of(event)  # it answers a task that runs here (tasks/update)
            if found is not None and found[0] in self.tasks.running:
                self.tasks.nowhere.spawn(self.tasks.update(*found))

    def close_listeners(self) -> None:
        """Graceful shutdown: every open listen stream gets its final result, and so
        does every one opened from now on (the client opens it again elsewhere)."""
        self.closing = True
        for key in list(self.listeners):
            self.end_listen(key)

    def end_listen(self, key: int) -> None:
        """The listen stream `key` gets its final result."""
        listener = self.listeners.pop(key, None)
        if listener is not None:
            result = t.SubscriptionsListenResult(meta={META_SUBSCRIPTION_ID: listener.request_id})
            listener.channel.reply(result_frame(listener.request_id, self.stamp_listen(result)))

    def close(self) -> None:
        """Graceful shutdown: listen streams get their final result, running tasks end;
        then listens are taken again (the server may be served once more)."""
        self.close_listeners()
        self.tasks.close()
        self.closing = False

    def stamp_listen(self, result: t.SubscriptionsListenResult) -> t.SubscriptionsListenResult:
        result.meta = {**result.meta, **self.server_meta}
        return result


def scoped(r: Registry) -> bool:
    """Whether any feature of the registry `r` needs a scope."""
    return (
        any(x.scopes for x in r.tools.values())
        or any(x.scopes for x in r.prompts.values())
        or any(x.scopes for x in r.resources.values())
        or any(x.scopes for x in r.templates)
    )


_LIST_CHANGED: dict[
    str,
    type[
        t.ToolListChangedNotification
        | t.PromptListChangedNotification
        | t.ResourceListChangedNotification
    ],
] = {
    TOOLS: t.ToolListChangedNotification,
    PROMPTS: t.PromptListChangedNotification,
    RESOURCES: t.ResourceListChangedNotification,
}
Notification = (
    t.ToolListChangedNotification
    | t.PromptListChangedNotification
    | t.ResourceListChangedNotification
    | t.ResourceUpdatedNotification
)


def change_notification(event: ChangeEvent, subscription_id: str | int | None) -> Notification:
    """The notification for a change; on a listen stream it carries the listen
    request's id (same JSON type) in `_meta`, in a legacy session nothing."""
    meta: dict[str, Any] | UnsetType = (
        UNSET if subscription_id is None else {META_SUBSCRIPTION_ID: subscription_id}
    )
    if event.kind == RESOURCE:
        params = t.ResourceUpdatedNotificationParams(uri=event.uri or "", meta=meta)
        return t.ResourceUpdatedNotification(params=params)
    kind = _LIST_CHANGED[event.kind]
    return kind() if meta is UNSET else kind(params=t.NotificationParams(meta=meta))
