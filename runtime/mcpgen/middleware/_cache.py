"""Response caching: results of read-only tools, resource reads and lists, kept for a
time under (method, params, caller) and dropped when the server announces a change."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from typing import Any, Final, Literal

import msgspec

from mcpgen._server._bus import PROMPTS, RESOURCE, RESOURCES, TOOLS
from mcpgen._server._core import CacheHint, ServerCore
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext
from mcpgen.stores import BusEvent, ChangeEvent
from mcpgen.stores._responses import InMemoryResponseStore, ResponseStore
from mcpgen_types import latest as t

__all__ = ["CACHED_METHODS", "ResponseCache"]

# Method -> the group its entries belong to (resources/read: one group per URI).
_GROUPS: Final = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resource:",
}
CACHED_METHODS: Final = frozenset(_GROUPS)
"""The methods `ResponseCache` may answer from its store (tools/call: read-only tools)."""
# A change of a kind -> the groups it makes stale.
_STALE: Final = {TOOLS: ("tools",), PROMPTS: ("prompts",), RESOURCES: ("resources",)}
_encode = msgspec.json.Encoder().encode


class ResponseCache(Middleware):
    """Answer repeated requests from a cache: lists, resource reads and calls of tools
    annotated `readOnlyHint: true`, keyed by method, params (without `_meta`) and
    caller (unless `scope="public"`: results that never depend on who asks).

    An entry lives `ttl` seconds, or the `ttl_ms` the server's own cache hint for the
    method says (`Server(cache={...})`); the hint the server writes into results
    (2026-07-28 `ttlMs`, `cacheScope`) is this ttl and scope where none was set. A tool
    or prompt list change drops that list (and the tool results), a resource list
    change the resource lists, `notify_resource_updated(uri)` that resource's reads.
    `store`: default in this process; `mcpgen.stores.redis.RedisResponseStore` shares
    one cache (and its invalidations) between workers. Errors, `isError` results,
    input rounds and tasks are never cached."""

    def __init__(
        self,
        ttl: float = 60.0,
        *,
        methods: Iterable[str] = CACHED_METHODS,
        scope: Literal["private", "public"] = "private",
        store: ResponseStore | None = None,
    ) -> None:
        self.ttl_ms = max(1, round(ttl * 1000))
        self.methods = frozenset(methods) & CACHED_METHODS
        self.scope = scope
        self.store: ResponseStore = store if store is not None else InMemoryResponseStore()
        self.inline = isinstance(self.store, InMemoryResponseStore)
        self.hits = self.misses = 0
        self._core: ServerCore | None = None
        self._pending: set[asyncio.Future[None]] = set()  # invalidations under way
        self._loop: asyncio.AbstractEventLoop | None = None

    def _attach(self, core: ServerCore) -> None:
        """On the first request: follow the core's change events, emit the hints."""
        self._core = core
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:  # driven without a loop (a test): nothing to invalidate on
            self._loop = None
        core.bus.subscribe(self._changed)
        for method in self.methods:
            hint = core.cache.get(method)
            if hint is not None and hint.ttl_ms == 0:
                core.cache[method] = CacheHint(ttl_ms=self.ttl_ms, scope=self.scope)

    def _changed(self, event: BusEvent) -> None:
        if type(event) is not ChangeEvent:
            return
        groups = _STALE.get(event.kind, ())
        if event.kind == RESOURCE:
            groups = ("resource:" + (event.uri or ""),)
        for group in groups:
            store = self.store
            if isinstance(store, InMemoryResponseStore):
                store.drop(group)
            elif self._loop is not None:  # from any thread (a sync handler's, maybe)
                self._loop.call_soon_threadsafe(self._invalidate, group)

    def _invalidate(self, group: str) -> None:
        task = asyncio.ensure_future(self.store.invalidate(group))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def cacheable(self, ctx: MiddlewareContext[Any]) -> bool:
        if ctx.method not in self.methods or ctx.step != "request":
            return False
        params = ctx.params
        if getattr(params, "input_responses", msgspec.UNSET) is not msgspec.UNSET:
            return False  # a round of a multi round-trip request
        if ctx.method == "tools/call":
            tool = ctx.tool()
            annotations = None if tool is None else tool.definition.annotations
            return (
                annotations is not None
                and annotations is not msgspec.UNSET
                and (annotations.read_only_hint is True)
            )
        return True

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        if self._core is not ctx.core:
            self._attach(ctx.core)
        if not self.cacheable(ctx):
            return await call_next(ctx)
        group = _GROUPS[ctx.method]
        if group == "resource:":
            group += ctx.params.uri
        hint = ctx.core.cache.get(ctx.method)
        public = (hint.scope if hint is not None else self.scope) == "public"
        body = msgspec.to_builtins(ctx.params)
        body.pop("_meta", None)
        who = "" if public else (ctx.principal or ctx.peer or "")
        key = hashlib.sha256(_encode([ctx.method, body, who])).hexdigest()
        result_type = t.METHODS[ctx.method].result
        found = await self.store.get(group, key)
        if found is not None:
            self.hits += 1
            return msgspec.json.decode(found, type=result_type)
        self.misses += 1
        result = await call_next(ctx)
        if type(result) is result_type and getattr(result, "is_error", None) is not True:
            ttl = hint.ttl_ms if hint is not None and hint.ttl_ms > 0 else self.ttl_ms
            await self.store.put(group, key, _encode(result), ttl)
        return result
