"""The client's engine under `mcpgen.Client`: one connection to one server.

It selects the era (probe, handshake, cached verdicts), pumps inbound frames to the
requests waiting for them, runs input rounds (modern) and answers server requests
(legacy) with the user's callbacks, and keeps the result cache. The public methods
live on `mcpgen.Client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Self, cast

import msgspec

from mcpgen import _protocol as proto
from mcpgen._client import ClientCore, Done, Incoming, NeedInput, Retry, RoundTrip
from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen.transports._background import start_kept
from mcpgen.transports._links import HttpLink, Link
from mcpgen_types import latest as t

__all__ = ["Callback", "Connection", "Era"]

log = logging.getLogger("mcpgen.client")
Era = Literal["auto", "modern", "legacy"]
Callback = Callable[..., Any]
# endpoint -> (era, version), per process; era "sse": legacy over the HTTP+SSE transport
_VERDICTS: dict[str, tuple[str, str]] = {}
_INVALIDATES = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


_TICK = 0.05  # seconds: how often pending requests are checked against their deadlines


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class Connection:
    """One connection to one server (see the module docstring); `Client` is its API."""

    def __init__(
        self,
        link: Link,
        *,
        era: Era = "auto",
        name: str = "mcpgen-client",
        version: str = "0.1.0",
        on_elicitation: Callback | None = None,
        on_sampling: Callback | None = None,
        on_roots: Callback | None = None,
        on_log: Callback | None = None,
        elicitation_modes: Sequence[str] = ("form",),
        log_level: str | None = None,
        timeout: float = 60.0,
        probe_timeout: float = 5.0,
        max_rounds: int = 8,
        cache: bool = True,
    ) -> None:
        if link.legacy_only and era == "modern":
            raise ConfigurationError("this transport predates the modern era: use era legacy")
        caps: dict[str, Any] = {}
        if on_elicitation is not None:
            caps["elicitation"] = {m: {} for m in elicitation_modes if m != "form"} | (
                {"form": {}} if "form" in elicitation_modes and len(elicitation_modes) > 1 else {}
            )
        if on_sampling is not None:
            caps["sampling"] = {}
        if on_roots is not None:
            caps["roots"] = {}
        legacy_caps = dict(caps)
        if on_roots is not None:
            legacy_caps["roots"] = {"listChanged": True}
        self.core = ClientCore(
            t.Implementation(name=name, version=version),
            caps,
            log_level=log_level,
            legacy_capabilities=legacy_caps,
        )
        self.link = link
        self.era_choice = era
        self.callbacks = {
            "elicitation/create": on_elicitation,
            "sampling/createMessage": on_sampling,
            "roots/list": on_roots,
        }
        self.on_log = on_log
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.max_rounds = max_rounds
        self.cache_enabled = cache
        self._pending: dict[Any, asyncio.Future[tuple[Incoming, int | None]]] = {}
        # One watchdog for every request's timeout (cheaper than a timer per request).
        self._deadlines: dict[Any, tuple[float, float, asyncio.Future[Any]]] = {}
        self._watchdog: asyncio.TimerHandle | None = None
        self._progress: dict[Any, Callback] = {}
        self._streams: dict[Any, asyncio.Queue[Any]] = {}
        self._session_events: list[asyncio.Queue[Any]] = []
        self._cache: dict[tuple[Any, ...], tuple[float, Any]] = {}
        self._tool_headers: dict[str, dict[str, tuple[str, str]]] = {}
        self._tokens = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        link.on_message = self._on_message
        link.on_closed = self._on_link_closed
        if isinstance(link, HttpLink):
            link.waiting = self._pending.__contains__

    async def __aenter__(self) -> Self:
        await self.link.start()
        try:
            await self._select_era()
        except BaseException:
            await self.link.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await self.link.close()
        self._fail_pending(ClientError("the client was closed"))
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    # -- era selection ----------------------------------------------------------------------------
    @property
    def era(self) -> str | None:
        return self.core.era

    @property
    def protocol_version(self) -> str:
        return self.core.version

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.core.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.core.server_capabilities

    async def _select_era(self) -> None:
        if self.era_choice == "modern":
            self.core.adopt_modern()
            return
        if self.era_choice == "legacy" or self.link.legacy_only:
            await self._initialize(remember=self.era_choice == "auto")
            return
        cached = _VERDICTS.get(self.link.key())
        if cached is not None:
            era, version = cached
            if era == "sse" and isinstance(self.link, HttpLink):  # straight to the old transport
                with contextlib.suppress(ClientError):
                    self.link = await self.link.switch_to_sse(
                        self._on_message, self._on_link_closed
                    )
            if era == "legacy" or self.link.legacy_only:
                await self._initialize(version, remember=True)
                return
            if era == "modern":
                self.core.adopt_modern(version)
                with contextlib.suppress(McpError, ClientError, TimeoutError):
                    await self.discover()
                    return
            _VERDICTS.pop(self.link.key(), None)  # the cached assumption failed: probe again
        await self._probe()

    async def _probe(self, version: str | None = None) -> None:
        rid, sent, frame = self.core.request("server/discover", {}, version=version or proto.LATEST)
        try:
            incoming, status = await self._exchange(
                rid, frame, self.core.headers("server/discover", sent), self.probe_timeout
            )
        except TimeoutError:
            incoming, status = None, None  # silent legacy servers never answer
        if incoming is None:
            verdict = self.core.probe_verdict(error={})
        elif incoming.kind == "response":
            verdict = self.core.probe_verdict(result=incoming.result)
        else:
            verdict = self.core.probe_verdict(error=incoming.error, http_status=status)
        if verdict.era == "retry" and version is None:
            await self._probe(verdict.version)
            return
        if verdict.era == "modern":
            _VERDICTS[self.link.key()] = ("modern", self.core.version)
            return
        await self._initialize(remember=True)

    async def _initialize(self, version: str | None = None, *, remember: bool = False) -> None:
        rid, frame = self.core.initialize(version)
        incoming, status = await self._exchange(rid, frame, {}, self.timeout)
        link = self.link
        refused = self.core.initialize_refused(incoming.error, status, incoming.id == rid)
        if refused and isinstance(link, HttpLink):
            message = (incoming.error or {}).get("message")  # era detection's last step:
            why = f"initialize answered HTTP {status} ({message})"  # try HTTP+SSE
            self.link = await link.switch_to_sse(self._on_message, self._on_link_closed, why)
            rid, frame = self.core.initialize(version)
            incoming, _ = await self._exchange(rid, frame, {}, self.timeout)
        if incoming.kind != "response":
            raise self.core.raise_error(incoming.error)
        initialized = self.core.on_initialize(incoming.result)
        await self.link.send(initialized, self.core.headers("notifications/initialized", {}))
        if remember:  # only what a probe learned is cached; a pinned era says nothing
            era = "sse" if self.link.legacy_only else "legacy"
            _VERDICTS[self.link.key()] = (era, self.core.version)
        if isinstance(self.link, HttpLink):
            await self.link.open_session_stream(self.core.version)

    # -- the message pump -------------------------------------------------------------------------
    def _on_message(self, frame: bytes, status: int | None, request_id: Any) -> None:
        incoming = self.core.classify(frame)
        if incoming.kind in ("response", "error"):
            key = incoming.id if incoming.id is not None else request_id
            future = self._pending.pop(key, None)
            if future is not None and not future.done():
                future.set_result((incoming, status))
            elif key in self._streams:  # a listen stream's final result
                self._streams[key].put_nowait(None)
        elif incoming.kind == "notification":
            self._notification(incoming)
        elif incoming.kind == "request":
            self._spawn(self._serve_request(incoming))

    def _on_link_closed(self) -> None:
        self._fail_pending(ClientError("the server closed the connection"))
        for queue in [*self._streams.values(), *self._session_events]:
            queue.put_nowait(None)

    def _fail_pending(self, exc: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
        self._pending.clear()

    def _spawn(self, coro: Any) -> None:
        start_kept(self._tasks, coro)

    def _notification(self, incoming: Incoming) -> None:
        method, params = incoming.method, incoming.params or {}
        if method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken"))
            if callback is not None:
                self._spawn(
                    _maybe(
                        callback(params.get("progress"), params.get("total"), params.get("message"))
                    )
                )
            return
        if method == "notifications/message":
            if self.on_log is not None:
                self._spawn(
                    _maybe(
                        self.on_log(params.get("level"), params.get("data"), params.get("logger"))
                    )
                )
            else:
                log.info("server log [%s] %s", params.get("level"), params.get("data"))
            return
        for cached_method in _INVALIDATES.get(method or "", ()):
            self._invalidate(cached_method)
        if method == "notifications/resources/updated":
            self._invalidate("resources/read", params.get("uri"))
        sub = (params.get("_meta") or {}).get(proto.META_SUBSCRIPTION_ID)
        if sub is not None:
            queue = self._streams.get(sub)
            if queue is not None and type(sub) is type(next(k for k in self._streams if k == sub)):
                queue.put_nowait(self.core.notification_of(incoming))
            return
        if method == "notifications/cancelled":  # a server ending a listen stream (stdio)
            queue = self._streams.get(params.get("requestId"))
            if queue is not None:
                queue.put_nowait(None)
            return
        for queue in self._session_events:
            queue.put_nowait(self.core.notification_of(incoming))

    async def _exchange(
        self, rid: Any, frame: bytes, headers: dict[str, str], timeout: float | None
    ) -> tuple[Incoming, int | None]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[Incoming, int | None]] = loop.create_future()
        self._pending[rid] = future
        if timeout is not None:
            self._deadlines[rid] = (loop.time() + timeout, timeout, future)
            if self._watchdog is None:
                self._watchdog = loop.call_later(_TICK, self._sweep)
        try:
            await self.link.send(frame, headers, rid)
            return await future
        except (TimeoutError, asyncio.CancelledError):
            self._pending.pop(rid, None)
            await self._cancel(rid)
            raise
        finally:
            self._pending.pop(rid, None)
            self._deadlines.pop(rid, None)

    def _sweep(self) -> None:
        """Fail the requests past their deadline; keep ticking while any wait."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for rid, (deadline, timeout, future) in list(self._deadlines.items()):
            if deadline <= now:
                del self._deadlines[rid]
                if not future.done():
                    future.set_exception(TimeoutError(f"no response within {timeout} s"))
        self._watchdog = loop.call_later(_TICK, self._sweep) if self._deadlines else None

    async def _cancel(self, rid: Any) -> None:
        """Tell the server to stop: close the HTTP stream (modern), or send
        `notifications/cancelled` (stdio; legacy HTTP, where a disconnect is not one)."""
        stream_closed = self.link.cancel(rid)
        if not stream_closed or self.core.era == "legacy":
            with contextlib.suppress(Exception):
                note = self.core.notification(
                    "notifications/cancelled",
                    {"requestId": rid, "reason": "cancelled by the client"},
                )
                await self.link.send(note, self.core.headers("notifications/cancelled", {}))

    # -- requests ---------------------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callback | None = None,
        tasks: bool = False,
    ) -> Any:
        """Send any request and return its typed result (input rounds fulfilled).
        `tasks`: declare the Tasks extension (modern era; the result may be a
        CreateTaskResult)."""
        token = None
        if progress is not None:
            token = f"progress-{next(self._tokens)}"
            self._progress[token] = progress
        try:
            info = t.METHODS.get(method)
            if info is not None and info.input_required and self.core.era == "modern":
                return await self._rounds(method, dict(params or {}), timeout, token, tasks)
            for attempt in (1, 2):
                rid, sent, frame = self.core.request(method, params, progress_token=token)
                headers = self._headers(method, sent)
                answer = await self._exchange(rid, frame, headers, timeout or self.timeout)
                if attempt == 1 and self._switched_version(answer[0]):
                    continue
                return self._typed(method, answer)
            raise AssertionError("unreachable")
        finally:
            if token is not None:
                self._progress.pop(token, None)

    def _switched_version(self, incoming: Incoming) -> bool:
        """A modern server refused our version (-32022): adopt one it lists, once
        (lifecycle page: pick a mutually supported version and retry)."""
        if self.core.era != "modern" or incoming.kind != "error":
            return False
        error = incoming.error or {}
        if error.get("code") != proto.UNSUPPORTED_VERSION:
            return False
        supported = (error.get("data") or {}).get("supported") or []
        ours = [v for v in proto.MODERN if v in supported]
        if not ours:
            return False
        self.core.version = ours[0]
        return True

    def _headers(self, method: str, sent: dict[str, Any]) -> dict[str, str]:
        if not self.link.http:
            return {}  # mirrored headers are for HTTP only
        params_headers = (
            self._tool_headers.get(sent.get("name", "")) if method == "tools/call" else None
        )
        return self.core.headers(method, sent, params_headers)

    def _typed(self, method: str, answer: tuple[Incoming, int | None]) -> Any:
        incoming, _ = answer
        if incoming.kind != "response":
            raise self.core.raise_error(incoming.error)
        return self.core.result(method, incoming.result)

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        token: Any,
        tasks: bool = False,
    ) -> Any:
        trip = RoundTrip(
            self.core, method, params, max_rounds=self.max_rounds, progress_token=token, tasks=tasks
        )
        retried = False  # one stale-header refresh or version switch per call
        while True:
            rid, sent, frame = trip.request()
            headers = self._headers(method, sent)
            incoming, _ = await self._exchange(rid, frame, headers, timeout or self.timeout)
            if incoming.kind != "response":
                error = incoming.error or {}
                stale = error.get("code") == proto.HEADER_MISMATCH and method == "tools/call"
                if not retried and (stale or self._switched_version(incoming)):
                    retried = True
                    if stale:  # our view of the tool's headers may be stale (transports page)
                        await self._refresh_tools()
                    trip.rounds -= 1
                    continue
                raise self.core.raise_error(error)
            step = trip.on_result(incoming.result)
            if isinstance(step, Done):
                return step.result
            if isinstance(step, Retry):
                await asyncio.sleep(step.delay)
                continue
            assert isinstance(step, NeedInput)
            answers = {}
            for key, request in step.requests.items():
                kind = type(request).__struct_config__.tag
                answers[key] = await self._fulfil(kind, getattr(request, "params", None))
            trip.answer(answers)

    async def _fulfil(self, method: str, params: Any) -> Any:
        """Answer one input request with the matching callback."""
        callback = self.callbacks.get(method)
        if callback is None:
            if method == "elicitation/create":
                return t.ElicitResult(action="cancel")
            raise ClientError(f"the server asked for {method}, but no callback handles it")
        if method == "roots/list":
            value = await _maybe(callback())
            if isinstance(value, t.ListRootsResult):
                return value
            return t.ListRootsResult(
                roots=[r if isinstance(r, t.Root) else t.Root(uri=str(r)) for r in value]
            )
        return await _maybe(callback(params))

    async def _serve_request(self, incoming: Incoming) -> None:
        """A legacy server-to-client request: answer it with a callback."""
        method = incoming.method or ""
        try:
            if method == "ping":
                result: Any = {}
            else:
                info = t.METHODS.get(method)
                if info is None or info.direction != "input":
                    raise McpError(proto.METHOD_NOT_FOUND, f"method not found: {method}")
                params = (
                    None
                    if info.params is None or incoming.params is None
                    else msgspec.convert(incoming.params, info.params)
                )
                result = await self._fulfil(method, params)
            frame = self.core.response(incoming.id, result)
        except McpError as exc:
            frame = self.core.error_response(incoming.id, exc.code, exc.message)
        except Exception as exc:
            frame = self.core.error_response(incoming.id, -32603, f"{type(exc).__name__}: {exc}")
        with contextlib.suppress(Exception):
            await self.link.send(frame, self.core.headers(method, {}))

    # -- caching ----------------------------------------------------------------------------------
    async def _cached(
        self, key: tuple[Any, ...], fetch: Callable[[], Awaitable[Any]], refresh: bool
    ) -> Any:
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and not refresh and hit[0] > now:
            return hit[1]
        result = await fetch()
        ttl = getattr(result, "ttl_ms", 0)
        if self.cache_enabled and isinstance(ttl, int) and ttl > 0:
            self._cache[key] = (now + ttl / 1000, result)
        return result

    def _invalidate(self, method: str, detail: Any = None) -> None:
        for key in [
            k for k in self._cache if k[0] == method and (detail is None or k[1] == detail)
        ]:
            del self._cache[key]

    async def discover(self) -> t.DiscoverResult:
        """`server/discover` (modern servers): versions, capabilities, instructions."""
        result = await self.request("server/discover")
        self.core.on_discover(result)
        return cast(t.DiscoverResult, result)

    async def _refresh_tools(self) -> None:
        """Re-read the tool list (where the mirrored-header view of each tool lives)."""
        raise NotImplementedError
