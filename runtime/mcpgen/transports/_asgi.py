"""ASGI plumbing for the HTTP app: responses, SSE framing, the channel that feeds one
streamed response, request bodies, loopback checks, and the lines announcing where an
app is served."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from mcpgen import _jsonrpc as rpc
from mcpgen._server import Channel, RequestInfo
from mcpgen.stores import EventStore

log = logging.getLogger("mcpgen.http")

__all__ = [
    "AppOptions",
    "ResponseStream",
    "SseWriter",
    "disconnected",
    "hostname",
    "is_loopback",
    "judge_host_and_origin",
    "json_response",
    "plain_response",
    "read_body",
    "route_path",
    "work_or_leave",
    "served_urls",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_JSON = (b"content-type", b"application/json")
_SSE = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class _Spawner(Protocol):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


class ResponseStream(Channel):
    """The channel of one streamed response: buffers frames until the response is
    streaming, then hands them to the writer. `reply` sets the final frame (an empty one
    just ends the stream)."""

    def __init__(
        self,
        app: _Spawner,
        headers: dict[str, str] | None,
        principal: str | None,
        scope: Scope | None = None,
    ) -> None:
        self.app = app
        self.headers = headers
        self.principal = principal
        self.scope = scope  # the POST's, for `ctx.request`
        self.body: bytes | None = None  # the POST's request
        self.events: list[bytes] = []
        self.final: bytes | None = None
        self.closed = False
        self.overflowed = False
        self._wakeup: asyncio.Event | None = None
        self._waiter: asyncio.Future[bool] | None = None  # the writer's, while it is idle

    def request_info(self) -> RequestInfo | None:
        return None if self.scope is None else request_info(self.scope, "streamable-http")

    def session_id(self) -> str | None:
        return None if self.headers is None else self.headers.get("mcp-session-id")

    @property
    def wakeup(self) -> asyncio.Event:
        if self._wakeup is None:
            self._wakeup = asyncio.Event()
            if self.events or self.final is not None:
                self._wakeup.set()
        return self._wakeup

    # Frames waiting for a client that does not read: past this many, further ones are
    # dropped (with one warning) rather than held without bound.
    max_queued = 10_000

    def notify(self, frame: bytes) -> None:
        if not self.closed:
            if len(self.events) >= self.max_queued:
                if not self.overflowed:
                    self.overflowed = True
                    log.warning("a client is not reading its event stream; dropping events")
                return
            self.events.append(frame)
            if self._wakeup is not None:
                self._wakeup.set()
            if self._waiter is not None:
                self.wake()

    # False for a response that cannot stream (its client takes JSON only): a
    # server-to-client request then goes to `detour` (the session's GET stream), and
    # with none open it is refused, so that its asker fails now rather than waits.
    streaming = True
    detour: Callable[[bytes], bool] | None = None

    def request(self, frame: bytes) -> bool | None:
        if self.streaming:
            self.notify(frame)
            return None
        return self.detour is not None and self.detour(frame)

    def reply(self, frame: bytes) -> None:
        if not self.closed:
            self.final = frame
            if self._wakeup is not None:
                self._wakeup.set()
            if self._waiter is not None:
                self.wake()

    def wake(self, _: object = None) -> None:
        """End the writer's `idle` wait (also a done callback of what it watches)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    async def idle(self, timeout: float | None) -> bool:
        """Wait until a frame or the reply comes or `wake` is called (True), or
        `timeout` seconds pass (False; None: no limit). One future and one timer: a
        fan-out to thousands of streams wakes each writer without a task or an
        `asyncio.wait`."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            woken: bool = await waiter
        finally:
            if timer is not None:
                timer.cancel()
            self._waiter = None
        return woken

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self.app.spawn(coro)


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


class AppOptions(Protocol):
    """The app options this module reads (an `HttpOptions`)."""

    @property
    def dns_rebinding_protection(self) -> bool | None: ...
    @property
    def allowed_hosts(self) -> Sequence[str] | None: ...
    @property
    def allowed_origins(self) -> Sequence[str] | None: ...
    @property
    def shutdown_grace_seconds(self) -> float: ...
    @property
    def path(self) -> str: ...
    @property
    def sse_path(self) -> str | None: ...


def served_urls(options: AppOptions, host: str, port: int, scheme: str = "http") -> str:
    """The lines announcing where an app listens: its endpoint and, when served, the
    older HTTP+SSE transport's stream."""
    where = f"[{host}]" if ":" in host else host
    base = f"{scheme}://{where}:{port}"
    text = f"mcpgen: serving MCP (Streamable HTTP) at {base}{options.path}\n"
    if options.sse_path is not None:
        text += f"mcpgen: and the older HTTP+SSE transport at {base}{options.sse_path}\n"
    return text


class SseWriter:
    """Writes one SSE response. With an event store (2025-11-25 sessions: resumable
    streams), every event is first kept there under `stream_id`, and the id the store
    gives it goes on the wire; the stream opens with a priming event (an id, no data)
    so the client can resume even before the first event. Without one, events carry
    no id."""

    def __init__(
        self, send: Send, retry_ms: int, events: EventStore | None = None, stream_id: str = ""
    ) -> None:
        self.send = send
        self.retry_ms = retry_ms
        self.events = events
        self.stream_id = stream_id

    async def start(
        self,
        extra: list[tuple[bytes, bytes]],
        first: bytes | None = None,
        replay: Sequence[tuple[str, bytes]] = (),
    ) -> None:
        """Send the headers and at once a first chunk, so the client sees the stream
        open: `first` (a whole event) if given; else the `replay` of what a resuming
        client missed (with their ids); else a priming event or a comment."""
        await self.send({"type": "http.response.start", "status": 200, "headers": _SSE + extra})
        if first is not None:
            await self._chunk(first)
        elif self.events is None:
            await self._chunk(b": stream open\n\n")  # flush the headers at once
        elif replay:
            # No new priming event here: its id would come after the replayed ones, and a
            # client cut off before they arrive would resume past them.
            head = b"retry: %d\n\n" % self.retry_ms
            await self._chunk(head + b"".join(_event(eid, f) for eid, f in replay if f))
        else:
            eid = await self.events.append(self.stream_id, b"")
            await self._chunk(b"id: %s\nretry: %d\ndata: \n\n" % (eid.encode(), self.retry_ms))

    async def event(self, frame: bytes) -> None:
        if not frame:
            return
        if self.events is None:
            await self._chunk(b"event: message\ndata: " + frame + b"\n\n")
        else:
            await self._chunk(_event(await self.events.append(self.stream_id, frame), frame))

    async def comment(self, text: bytes) -> None:
        await self._chunk(b": " + text + b"\n\n")

    async def _chunk(self, data: bytes) -> None:
        await self.send({"type": "http.response.body", "body": data, "more_body": True})

    async def end(self) -> None:
        with contextlib.suppress(Exception):
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})


def _event(event_id: str, frame: bytes) -> bytes:
    return b"id: " + event_id.encode() + b"\nevent: message\ndata: " + frame + b"\n\n"


def request_info(scope: Scope, transport: str) -> RequestInfo:
    """What a handler may see of the HTTP request in `scope` (`ctx.request`); the
    Authorization header stays out of it (the verified token is `ctx.auth`)."""
    client = scope.get("client")
    return RequestInfo(
        transport=transport,
        method=scope.get("method", ""),
        path=scope.get("root_path", "") + route_path(scope),
        query=scope.get("query_string", b"").decode("latin-1"),
        headers={
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers", ())
            if name != b"authorization"
        },
        client=(client[0], client[1]) if client else None,
    )


def route_path(scope: Scope) -> str:
    """The path an app matches against its routes: `scope["path"]` without the mount
    prefix (`root_path`). Frameworks differ: newer ones (Starlette's `Mount`, uvicorn's
    `--root-path`) keep the prefix in `path`, older ones removed it; a prefix is taken off
    only where it is there, ending at a segment boundary."""
    path: str = scope["path"]
    root: str | None = scope.get("root_path")
    if root and path.startswith(root):  # not taken by a plain, unmounted app
        rest = path[len(root) :]
        if not rest or rest[0] == "/":
            return rest
    return path


async def read_body(receive: Receive, cap: int) -> bytes | None:
    message = await receive()
    if not message.get("more_body", False) and message["type"] == "http.request":
        body: bytes = message.get("body", b"")
        return body if len(body) <= cap else None
    return await _read_chunks(receive, cap, message)


async def _read_chunks(receive: Receive, cap: int, message: dict[str, Any]) -> bytes | None:
    chunks, size = [], 0
    while True:
        if message["type"] == "http.disconnect":
            return b""
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
        message = await receive()


async def disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def work_or_leave(
    work: asyncio.Future[Any],
    stream: ResponseStream,
    receive: Receive,
    on_disconnect: Callable[[], None] | None,
) -> bool:
    """Wait until `work` ends or `stream` holds a frame or its reply; with
    `on_disconnect`, call it and return True if the client disconnects first (its
    request is cancelled). The stream's own waiter, woken by a frame, the reply or a
    done callback: no task or `asyncio.wait` besides the disconnect watch."""
    gone = None if on_disconnect is None else asyncio.ensure_future(disconnected(receive))
    if not (work.done() or stream.events or stream.final is not None):
        work.add_done_callback(stream.wake)
        if gone is not None:
            gone.add_done_callback(stream.wake)
        try:
            await stream.idle(None)
        finally:
            work.remove_done_callback(stream.wake)
            if gone is not None:
                gone.remove_done_callback(stream.wake)
    if gone is None:
        return False
    if not gone.done():
        gone.cancel()
        return False
    assert on_disconnect is not None
    on_disconnect()
    return True


async def json_response(
    send: Send, body: bytes, status: int, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    headers = [_JSON, (b"content-length", b"%d" % len(body))]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def plain_response(
    send: Send, status: int, body: bytes, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    headers = [(b"content-length", b"%d" % len(body)), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def hostname(host: str) -> str:
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback(address: str) -> bool:
    if address in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def judge_host_and_origin(options: AppOptions, bound: str, headers: dict[str, str]) -> bytes | None:
    """None when the request's Host and Origin pass the app's DNS-rebinding rules
    (`options`: an HttpOptions; `bound`: the address the server listens on), else the
    403 error frame."""
    o = options
    protect = o.dns_rebinding_protection
    if protect is None:
        protect = is_loopback(bound)
    host = headers.get("host", "")
    host_name = hostname(host)
    if protect:
        allowed = set(o.allowed_hosts) if o.allowed_hosts is not None else LOOPBACK_NAMES
        if host_name not in allowed:
            return _forbidden(f"Host {host!r} is not allowed")
    origin = headers.get("origin")
    if origin is not None:
        if origin == "null":  # opaque: any page can send it (a sandboxed frame, a file)
            return _forbidden("Origin 'null' is not allowed")
        if o.allowed_origins is not None:
            ok = origin in o.allowed_origins
        elif protect and is_loopback(bound):  # local pages, only for a local server
            ok = hostname(urlsplit(origin).netloc) in LOOPBACK_NAMES
        else:
            ok = urlsplit(origin).netloc == host  # same origin only
        if not ok:
            return _forbidden(f"Origin {origin!r} is not allowed")
    return None


def _forbidden(message: str) -> bytes:
    return rpc.error_frame(None, rpc.INVALID_REQUEST, message, status=403)
