"""The deprecated 2024-11-05 "HTTP with SSE" transport, served next to Streamable HTTP.

`GET <sse_path>` opens a session and its one event stream; the first event (`endpoint`)
names the URL, carrying the session id in its query, where the client POSTs its
messages. Every frame the server sends in that session (replies, notifications,
server-to-client requests) goes down that stream as a `message` event, and a POST is
answered `202` as soon as the core has taken its message (handlers run as tasks, so
they overlap). A body that is not JSON at all is answered `400` with the JSON-RPC error,
which also goes down the stream. The stream's end ends the session: in-flight work is
cancelled and the session forgotten. The core decides every protocol rule; the client
opens the session with `initialize` like on stdio.

Sessions live in their own in-memory store (the stream that carries them lives in this
process), bounded by the app's limits: past `max_sessions` open streams a new one is
refused with `503`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qs, quote

from mcpgen import _jsonrpc as rpc
from mcpgen._errors import ConfigurationError
from mcpgen._server import Channel, RequestInfo, Settled, deliver
from mcpgen.transports._asgi import (
    Receive,
    ResponseStream,
    Scope,
    Send,
    SseWriter,
    disconnected,
    json_response,
    plain_response,
    read_body,
    request_info,
)
from mcpgen.transports._http_auth import refuse
from mcpgen.transports._limits import BodyDeadlines, client_of, peer_of
from mcpgen.transports._port import ServerPort
from mcpgen.transports._sessions import HttpSession, LiveSessions

if TYPE_CHECKING:
    from mcpgen.auth._server import AuthGate

__all__ = ["HostApp", "LegacySse"]


class _Options(Protocol):
    """The app options the old transport reads (an `HttpOptions`)."""

    @property
    def path(self) -> str: ...
    @property
    def max_body(self) -> int: ...
    @property
    def sse_retry_ms(self) -> int: ...
    @property
    def session_idle_seconds(self) -> float: ...
    @property
    def max_sessions(self) -> int: ...
    @property
    def max_sessions_per_client(self) -> int | None: ...


class HostApp(Protocol):
    """What the old transport uses of the Streamable HTTP app it is served beside
    (an `McpAsgiApp`): its server, options, tasks, open streams and stream pump."""

    streams: set[ResponseStream]
    gate: AuthGate | None  # bearer tokens checked (`_http_auth`), or None

    @property
    def server(self) -> ServerPort: ...
    @property
    def options(self) -> _Options: ...
    @property
    def stopping(self) -> bool: ...
    @property
    def bodies(self) -> BodyDeadlines: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def negotiate(self, accept: str) -> tuple[bool, bool]: ...

    async def pump(
        self,
        writer: SseWriter,
        channel: ResponseStream,
        task: asyncio.Future[Settled] | None,
        watcher: asyncio.Future[Any],
        on_disconnect: Callable[[], None] | None,
    ) -> None: ...


def _error(code: int, message: str, status: int) -> rpc.ErrorFrame:
    return rpc.error_frame(None, code, message, status=status)


_GONE = _error(rpc.INVALID_REQUEST, "unknown or ended session; reconnect", 404)


class _Relay(Channel):
    """Every frame of an SSE session, whatever its kind, becomes an event on the
    session's stream; `principal` (and `auth`, its verified token) is the caller of the
    request that brought the message (`scope`)."""

    def __init__(self, app: HostApp, stream: ResponseStream, scope: Scope, session_id: str) -> None:
        self.app = app
        self.stream = stream
        self.principal = scope.get("mcpgen.principal")
        self.auth = scope.get("mcpgen.auth")
        self.scope, self.sid = scope, session_id
        self.peer = peer_of(scope)

    def request_info(self) -> RequestInfo:
        return request_info(self.scope, "sse")

    def session_id(self) -> str:
        return self.sid

    def notify(self, frame: bytes) -> None:
        self.stream.notify(frame)

    def request(self, frame: bytes) -> None:
        self.stream.notify(frame)

    def reply(self, frame: bytes) -> None:
        self.stream.notify(frame)  # a late reply is one more event, not the stream's end

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self.app.spawn(coro)


class LegacySse:
    """The two endpoints of the old transport, for one `McpAsgiApp`."""

    def __init__(self, app: HostApp, sse_path: str, messages_path: str) -> None:
        self.app = app
        self.sse_path = sse_path.rstrip("/") or "/"
        self.messages_path = messages_path.rstrip("/") or "/"
        if len({app.options.path.rstrip("/") or "/", self.sse_path, self.messages_path}) < 3:
            raise ConfigurationError(
                "path, sse_path and messages_path must differ: "
                f"{app.options.path!r}, {sse_path!r}, {messages_path!r}"
            )
        options = app.options
        self.store = LiveSessions(
            idle_timeout=options.session_idle_seconds, max_sessions=options.max_sessions
        )
        self.open: set[ResponseStream] = set()

    def serves(self, path: str) -> bool:
        return (path.rstrip("/") or "/") in (self.sse_path, self.messages_path)

    async def handle(
        self, path: str, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        """A request on one of the two paths (`path`: the app's own, without a mount
        point's prefix; Host and Origin already checked)."""
        method = scope["method"]
        if (path.rstrip("/") or "/") == self.sse_path:
            if method == "GET":
                await self._stream(scope, receive, send, headers)
            else:
                await self._not_allowed(send, method, b"GET")
        elif method == "POST":
            await self._message(scope, receive, send, headers)
        else:
            await self._not_allowed(send, method, b"POST")

    def close(self) -> None:
        """Graceful shutdown: every stream ends once its queued events are written."""
        for stream in list(self.open):
            stream.reply(b"")

    async def _not_allowed(self, send: Send, method: str, allow: bytes) -> None:
        frame = _error(rpc.INVALID_REQUEST, f"method {method} not allowed", 405)
        await json_response(send, frame, 405, [(b"allow", allow)])

    # -- GET: the session's stream -------------------------------------------------------------
    async def _stream(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        app = self.app
        if not app.negotiate(headers.get("accept", "*/*"))[1]:
            frame = _error(rpc.INVALID_REQUEST, "Accept must allow text/event-stream", 406)
            await json_response(send, frame, 406)
            return
        if app.stopping:
            await json_response(send, _error(rpc.INVALID_REQUEST, "shutting down", 503), 503)
            return
        stream = ResponseStream(app, None, None)
        relay = _Relay(app, stream, scope, "")
        client = client_of(scope)
        quota = app.options.max_sessions_per_client
        if quota is not None and self.store.held_by(client) >= quota:  # each with its stream
            frame = _error(rpc.INVALID_REQUEST, "too many open sessions for this client", 429)
            await json_response(send, frame, 429)
            return
        http_session = self.store.add(app.server.session(relay), relay.principal, client=client)
        relay.sid = http_session.id
        if len(self.store) > app.options.max_sessions:  # every one has an open stream
            self.store.remove(http_session.id)
            frame = _error(rpc.INVALID_REQUEST, "too many open sessions", 503)
            await json_response(send, frame, 503)
            return
        http_session.streams.append(stream)
        endpoint = self._endpoint(scope, http_session)
        writer = SseWriter(send, app.options.sse_retry_ms)
        self.open.add(stream)
        app.streams.add(stream)
        watcher = asyncio.ensure_future(disconnected(receive))
        try:
            await writer.start([], b"event: endpoint\ndata: " + endpoint + b"\n\n")
            await app.pump(writer, stream, None, watcher, None)
        except OSError:  # the client went away mid-write
            pass
        finally:
            stream.closed = True
            self.open.discard(stream)
            app.streams.discard(stream)
            watcher.cancel()
            http_session.streams.clear()
            self.store.remove(http_session.id)  # closes the core session: work is cancelled
            await writer.end()

    def _endpoint(self, scope: Scope, http_session: HttpSession) -> bytes:
        """Where this session's messages go: the messages path behind the app's mount
        point (`root_path`, whether or not the framework also left it in `path`), plus
        the session id."""
        path = scope.get("root_path", "") + self.messages_path
        return f"{quote(path)}?session_id={http_session.id}".encode()

    # -- POST: one message ---------------------------------------------------------------------
    async def _message(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        session_id = (query.get("session_id") or query.get("sessionId") or [""])[0]
        if not session_id:
            frame = _error(rpc.INVALID_REQUEST, "the session_id query parameter is required", 400)
            await json_response(send, frame, 400)
            return
        http_session = self.store.get(session_id)
        principal = scope.get("mcpgen.principal")
        if http_session is None or not http_session.streams or http_session.principal != principal:
            await json_response(send, _GONE, 404)  # another principal's session does not exist
            return
        ctype = headers.get("content-type", "")
        if ctype.split(";")[0].strip().lower() != "application/json":
            frame = _error(rpc.INVALID_REQUEST, "Content-Type must be application/json", 415)
            await json_response(send, frame, 415)
            return
        cap = self.app.options.max_body
        body = await read_body(receive, cap)
        self.app.bodies.read(scope)
        if body is None:
            frame = _error(rpc.INVALID_REQUEST, f"request body over {cap} bytes", 413)
            await json_response(send, frame, 413)
            return
        if not http_session.streams:  # the stream ended while the body was read
            await json_response(send, _GONE, 404)
            return
        stream: ResponseStream = http_session.streams[0]
        relay = _Relay(self.app, stream, scope, session_id)
        outcome = http_session.core.receive(body, relay)
        deliver(outcome, relay)  # a reply, now or later, is one more event on the stream
        if await refuse(self.app.gate, scope, send, outcome):
            return  # refused by the core (a scope the token lacks): the POST says so too
        if isinstance(outcome, rpc.ErrorFrame) and outcome.code == rpc.PARSE_ERROR:
            await json_response(send, outcome, 400)  # not JSON: say so here as well
            return
        await plain_response(send, 202, b"")
