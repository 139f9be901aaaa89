"""The client's engine under `mcpgen.Client`: one connection to one server, I/O only.

It drives era selection (`_era_selection`: the probe, the handshake, cached verdicts,
the switch to an older transport a link offers), pumps inbound frames to the requests
waiting for them, runs input rounds (modern) and answers server requests (legacy) with
the user's callbacks. Every protocol decision is the sans-I/O core's (`mcpgen._client`):
which era a probe found, which refused request is sent again, what a frame is.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from typing import Any, Self

import msgspec

from mcpgen import _protocol as proto
from mcpgen._client import (
    ClientCore,
    Done,
    Incoming,
    NeedInput,
    RequestId,
    Retry,
    RoundTrip,
    VerdictCache,
)
from mcpgen._client._cache import ResultCache
from mcpgen._errors import (
    ClientError,
    ConfigurationError,
    ConnectionClosedError,
    McpError,
    ProtocolViolationError,
    RequestTimeoutError,
    TransportError,
)
from mcpgen.client._callbacks import Callbacks, ProgressCallback, notify
from mcpgen.client._era_selection import Answer, Era, select_era
from mcpgen.transports._background import start_kept
from mcpgen.transports._link_base import Link
from mcpgen_types import latest as t

__all__ = ["Connection", "Era", "Note", "Stream"]

log = logging.getLogger("mcpgen.client")
Note = msgspec.Struct | dict[str, Any]  # a server notification (typed when it fits a type)
# A listen stream's notifications, then None at its end (or the failure that ended it).
Stream = asyncio.Queue[Note | ClientError | McpError | None]

_TICK = 0.05  # seconds: how often pending requests are checked against their deadlines


class Connection:
    """One connection to one server (see the module docstring); `Client` is its API."""

    def __init__(
        self,
        link: Link,
        core: ClientCore,
        callbacks: Callbacks,
        cache: ResultCache,
        verdicts: VerdictCache,
        *,
        era: Era = "auto",
        timeout: float = 60.0,
        probe_timeout: float = 5.0,
        max_rounds: int = 8,
    ) -> None:
        if link.legacy_only and era == "modern":
            raise ConfigurationError("this transport predates the modern era: use era legacy")
        self.core = core
        self.callbacks = callbacks
        self.cache = cache
        self.verdicts = verdicts
        self.era_choice = era
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.max_rounds = max_rounds
        # Re-reads the tool list (where the mirrored-header view of each tool comes from).
        self.refresh_tools: Callable[[], Awaitable[object]] | None = None
        self.tool_headers: dict[str, dict[str, tuple[str, str]]] = {}
        self.streams: dict[RequestId, Stream] = {}
        self.session_events: list[Stream] = []
        self._pending: dict[RequestId, asyncio.Future[Answer]] = {}
        # One watchdog for every request's timeout (cheaper than a timer per request).
        self._deadlines: dict[RequestId, tuple[float, float, asyncio.Future[Answer]]] = {}
        self._watchdog: asyncio.TimerHandle | None = None
        self._progress: dict[str, ProgressCallback] = {}
        self._tokens = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = False
        self._lost: str | None = None  # why nothing will answer any more (the server hung up)
        self.link = link
        self._attach(link)

    def _attach(self, link: Link) -> None:
        link.on_message = self._on_message
        link.on_failure = self._on_failure
        link.on_closed = self._on_link_closed
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
        if self.closed:
            return
        self.closed = True
        for task in list(self._tasks):
            task.cancel()
        await self.link.close()
        self._fail_pending(ConnectionClosedError("the client was closed"))
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    async def _select_era(self) -> None:  # replaced per connection by a RetryPolicy
        await select_era(self)

    # -- the message pump -------------------------------------------------------------------------
    def _on_message(self, frame: bytes, status: int | None, request_id: RequestId | None) -> None:
        incoming = self.core.classify(frame)
        kind = incoming.kind
        if kind in ("response", "error"):
            key = incoming.id if incoming.id is not None else request_id
            future = self._pending.pop(key, None) if key is not None else None
            if future is not None and not future.done():
                future.set_result((incoming, status))
            elif key in self.streams:  # a listen stream's end: its final result, or its error
                end = self.core.raise_error(incoming.error or {}) if kind == "error" else None
                self.streams[key].put_nowait(end)
        elif kind == "notification":
            self._notification(incoming)
        elif kind == "request":
            self._spawn(self._serve_request(incoming))
        else:  # not JSON-RPC: fails the request it answers (its id, or an HTTP failure's)
            key = incoming.id
            if key is None and status is not None and status >= 300:
                key = request_id
            if key is not None and key in self._pending:
                what = f"HTTP {status}: " if status is not None else ""
                text = frame[:200].decode(errors="replace")
                self._on_failure(
                    key, ProtocolViolationError(f"{what}not a JSON-RPC answer: {text}")
                )
            else:  # nothing says which request it was for: nothing fails, but it is seen
                log.warning("dropped a frame from the server that is not JSON-RPC: %r", frame[:200])

    def _on_failure(self, request_id: RequestId, error: ClientError) -> None:
        future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            future.set_exception(error)
        elif request_id in self.streams:  # a listen request that failed
            self.streams[request_id].put_nowait(error)

    def _on_link_closed(self) -> None:
        self._lost = self.link.closed_reason()
        self._fail_pending(ConnectionClosedError(self._lost))
        for queue in [*self.streams.values(), *self.session_events]:
            queue.put_nowait(None)

    def _fail_pending(self, exc: TransportError) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
        self._pending.clear()

    def _spawn(self, coro: Coroutine[Any, Any, object]) -> None:
        start_kept(self._tasks, coro)

    def _notification(self, incoming: Incoming) -> None:
        method, params = incoming.method or "", incoming.params or {}
        if method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken", ""))
            if callback is not None:  # guarded: a raising callback must not reach the reader
                args = (params.get("progress"), params.get("total"), params.get("message"))
                notify("progress", callback, args, self._spawn)
            return
        if method == "notifications/message":
            on_log = self.callbacks.on_log
            if on_log is not None:
                args = (params.get("level"), params.get("data"), params.get("logger"))
                notify("on_log", on_log, args, self._spawn)
            else:
                log.info("server log [%s] %s", params.get("level"), params.get("data"))
            return
        self.cache.on_notification(method, params)
        sub = (params.get("_meta") or {}).get(proto.META_SUBSCRIPTION_ID)
        if sub is not None:
            queue = self.streams.get(sub)
            if queue is not None and type(sub) is type(next(k for k in self.streams if k == sub)):
                queue.put_nowait(self.core.notification_of(incoming))
            return
        if method == "notifications/cancelled":  # a server ending a listen stream (stdio)
            queue = self.streams.get(params.get("requestId", ""))
            if queue is not None:
                queue.put_nowait(None)
            return
        for queue in self.session_events:
            queue.put_nowait(self.core.notification_of(incoming))

    async def _serve_request(self, incoming: Incoming) -> None:
        """A legacy server-to-client request: answer it with a callback."""
        frame = await self.callbacks.serve(self.core, incoming)
        with contextlib.suppress(Exception):
            await self.link.send(frame, self.core.headers(incoming.method or "", {}))

    async def _exchange(
        self,
        rid: RequestId,
        frame: bytes,
        headers: Mapping[str, str],
        timeout: float | None,
    ) -> Answer:
        if self._lost is not None:
            raise ConnectionClosedError(self._lost)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Answer] = loop.create_future()
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
            await self.cancel(rid)
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
                    future.set_exception(RequestTimeoutError(timeout))
        self._watchdog = loop.call_later(_TICK, self._sweep) if self._deadlines else None

    async def cancel(self, rid: RequestId) -> None:
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
        progress: ProgressCallback | None = None,
        tasks: bool = False,
    ) -> msgspec.Struct:
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
            resent = False
            while True:
                rid, sent, frame = self.core.request(method, params, progress_token=token)
                headers = self.headers(method, sent)
                incoming, _ = await self._exchange(rid, frame, headers, timeout or self.timeout)
                if incoming.kind == "response":
                    return self.core.result(method, incoming.result)
                error = incoming.error or {}
                if resent or self.core.resend_after(method, error) is None:
                    raise self.core.raise_error(error)
                resent = True
        finally:
            if token is not None:
                self._progress.pop(token, None)

    @contextlib.contextmanager
    def progress_token(self, progress: ProgressCallback | None) -> Iterator[str | None]:
        """A progress token whose notifications go to `progress` while the block runs
        (None without a callback), for requests sent by hand (a 2025-11-25 task's)."""
        if progress is None:
            yield None
            return
        token = f"progress-{next(self._tokens)}"
        self._progress[token] = progress
        try:
            yield token
        finally:
            self._progress.pop(token, None)

    async def raw_request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        capabilities: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> msgspec.Raw | None:
        """One request, no input rounds, no retry: its raw result (an error raises)."""
        rid, sent, frame = self.core.request(method, params, capabilities=capabilities)
        headers = self.headers(method, sent)
        incoming, _ = await self._exchange(rid, frame, headers, timeout or self.timeout)
        if incoming.kind != "response":
            raise self.core.raise_error(incoming.error or {})
        return incoming.result

    def headers(self, method: str, sent: dict[str, Any]) -> dict[str, str]:
        if not self.link.http:
            return {}  # mirrored headers are for HTTP only
        params_headers = (
            self.tool_headers.get(sent.get("name", "")) if method == "tools/call" else None
        )
        return self.core.headers(method, sent, params_headers)

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        token: str | None,
        tasks: bool = False,
    ) -> msgspec.Struct:
        trip = RoundTrip(
            self.core, method, params, max_rounds=self.max_rounds, progress_token=token, tasks=tasks
        )
        while True:
            rid, sent, frame = trip.request()
            headers = self.headers(method, sent)
            incoming, _ = await self._exchange(rid, frame, headers, timeout or self.timeout)
            if incoming.kind != "response":
                resend = trip.on_error(incoming.error or {})
                if resend.refresh_tools and self.refresh_tools is not None:
                    await self.refresh_tools()
                continue
            step = trip.on_result(incoming.result)
            if isinstance(step, Done):
                return step.result
            if isinstance(step, Retry):
                await asyncio.sleep(step.delay)
                continue
            assert isinstance(step, NeedInput)
            trip.answer(await self.callbacks.fulfil_all(step.requests))

    async def discover(self) -> t.DiscoverResult:
        """`server/discover` (modern servers): versions, capabilities, instructions."""
        result = await self.request("server/discover")
        assert isinstance(result, t.DiscoverResult)
        self.core.on_discover(result)
        return result
