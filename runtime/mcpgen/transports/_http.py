"""Streamable HTTP as a plain ASGI 3 application: both eras on one endpoint.

Modern (2026-07-28): every POST is one stateless request served by a fresh core
session; the reply is JSON unless the request emits notifications first, then SSE
(events, then the reply). Closing the response cancels the request. Legacy:
`initialize` mints an `Mcp-Session-Id`; later POSTs, a standalone GET stream and
DELETE refer to it; their state sits in a `SessionStore` and, from 2025-11-25,
their SSE events in an `EventStore`, replayed after `Last-Event-ID` (`_sessions`).

HTTP+SSE (2024-11-05) has two more paths (`_sse_legacy`), the health check one (`_health`).
Security: Host/Origin checks against DNS rebinding (on by default on a loopback address)
on every MCP path (`_http_headers`), a request body cap; CORS only for the
`allowed_origins` (`_cors`).

Statuses come from the core: each error frame carries the status the protocol layer
chose; this module adds only HTTP-level ones (403, 404 for unknown sessions, 405,
406, 413, 415, 202).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcpgen import _jsonrpc as rpc
from mcpgen._server import DEFERRED, Handle, Refusal, Settled, deliver
from mcpgen.stores import (
    EventStore,
    InMemoryEventStore,
    InMemorySessionStore,
    SessionStore,
    StoreUnavailableError,
)
from mcpgen.transports._asgi import (
    ResponseStream,
    SseWriter,
    disconnected,
    json_response,
    plain_response,
    read_body,
    route_path,
    work_or_leave,
)
from mcpgen.transports._background import start_kept
from mcpgen.transports._cors import answered, with_cors
from mcpgen.transports._drain import closed_reply, drain, unanswered
from mcpgen.transports._health import off_endpoint
from mcpgen.transports._http_auth import auth_gate, refuse
from mcpgen.transports._http_headers import HeaderVerdicts, read_headers
from mcpgen.transports._lifespan import AppLifespan
from mcpgen.transports._limits import (
    BodyDeadlines,
    body_too_slow,
    client_of,
    peer_of,
)
from mcpgen.transports._options import HttpOptions
from mcpgen.transports._port import ServerPort
from mcpgen.transports._sessions import LegacySessions, resumable, unavailable
from mcpgen.transports._sse_legacy import LegacySse
from mcpgen.transports._uvicorn import uvicorn_server

if TYPE_CHECKING:
    from mcpgen.auth._metadata import AuthSettings

__all__ = [
    "EventStore",
    "HttpOptions",
    "InMemoryEventStore",
    "InMemorySessionStore",
    "McpAsgiApp",
    "SessionStore",
    "uvicorn_server",
]

log = logging.getLogger("mcpgen.http")
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _status_of(frame: bytes) -> int:
    return frame.status if isinstance(frame, rpc.ErrorFrame) else 200


# Pending work of one request: the task `deliver` started to settle its outcome.
Work = asyncio.Future[Settled]


def _task(handle: Handle) -> Work:
    # `deliver` hands back what `_Stream.spawn` made: an asyncio task.
    assert isinstance(handle, asyncio.Future)
    return handle


def _settled(task: Work) -> Settled:
    """What ended pending work came to (None when it was cancelled)."""
    return None if task.cancelled() else task.result()


def _error(code: int, message: str, status: int) -> rpc.ErrorFrame:
    return rpc.error_frame(None, code, message, status=status)


_Stream = ResponseStream  # one POST's (or GET's) response
_UNKNOWN_SESSION = _error(rpc.INVALID_REQUEST, "unknown or expired session; initialize again", 404)


class McpAsgiApp:
    """`server.asgi_app()`: mount it anywhere that speaks ASGI 3."""

    def __init__(
        self,
        server: ServerPort,
        options: HttpOptions | None = None,
        store: SessionStore | None = None,
        events: EventStore | None = None,
        auth: AuthSettings | None = None,  # bearer tokens required (`_http_auth`)
    ) -> None:
        self.server = server
        self.options = o = options or HttpOptions()
        self.legacy_sessions = legacy = LegacySessions(self, o, store, events)
        self.store, self.events, self.sessions = legacy.store, legacy.events, legacy.live
        self.tasks: set[asyncio.Task[Any]] = set()
        self.streams: set[_Stream] = set()
        self.stopping = False
        self.stopped = False  # the drain is over: nothing new is served (503s)
        self.bodies = BodyDeadlines(o.body_timeout_seconds)
        self.verdicts = HeaderVerdicts(o)  # Host/Origin and Accept (`_http_headers`)
        self._path = self.options.path.rstrip("/")
        self.legacy_sse = (
            None if o.sse_path is None else LegacySse(self, o.sse_path, o.messages_path)
        )
        self.gate, self._serve = auth_gate(self, auth, self._path)
        self.cors, self._serve = with_cors(self, self._serve)  # (None, itself): none listed
        self.life = AppLifespan(server, self.shutdown)  # ASGI lifespan, or the first request
        self.lifespan = self.life.host_lifespan  # for a host: `FastAPI(lifespan=app.lifespan)`

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return start_kept(self.tasks, coro)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self.life.started or self.stopped or await self.life.first_request(send):
                bodies = self.bodies
                if scope["method"] == "POST":  # a body that trickles in is cut off
                    bodies.reading(scope)
                try:
                    await self._serve(scope, receive, send)
                except StoreUnavailableError as exc:  # a shared store is down: 503
                    await unavailable(send, exc)
                except asyncio.CancelledError:
                    if not bodies.expired(scope):
                        raise
                    await body_too_slow(send, bodies.seconds)
                finally:
                    bodies.read(scope)
        elif kind == "lifespan":
            await self.life.serve(receive, send)

    async def shutdown(self, busy: Callable[[], bool] | None = None) -> None:
        """Drain (`_drain`): streams that only wait end at once, in-flight work and
        tasks get `shutdown_grace_seconds` (while `busy()` says requests are still
        answered), then what still runs is cancelled; after it, every request is a 503."""
        if self.stopping:
            return
        self.stopping = True
        await drain(self, self.options.shutdown_grace_seconds, busy)
        self.stopped = True
        self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await self.life.stop()  # the server's lifespan ends after the app's work

    # -- requests --------------------------------------------------------------------------------
    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = route_path(scope)  # without a mount point's prefix
        old = None  # the 2024-11-05 transport's paths
        if path != self._path and path.rstrip("/") != self._path:
            old = self.legacy_sse
            if old is None or not old.serves(path):
                await off_endpoint(self, path, scope, send)  # the health check, else 404
                return
        headers = read_headers(scope["headers"])
        denied = self.verdicts.deny(scope, headers)
        if denied is not None:
            await json_response(send, denied, 403)
            return
        if self.cors is not None and "origin" in headers:  # a browser: CORS if it is listed
            send = await self.cors.admit(scope, send, headers["origin"])
            if send is answered:
                return  # its preflight
        if old is not None:
            await old.handle(path, scope, receive, send, headers)
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send, headers)
        elif method == "GET":
            await self.legacy_sessions.get(scope, receive, send, headers)
        elif method == "DELETE" and self.stopped:  # the session lives on elsewhere
            await json_response(send, _error(rpc.INVALID_REQUEST, "shutting down", 503), 503)
        elif method == "DELETE":
            await self.legacy_sessions.delete(scope, send, headers)
        else:
            await json_response(
                send,
                _error(rpc.INVALID_REQUEST, f"method {method} not allowed", 405),
                405,
                [(b"allow", b"GET, POST, DELETE")],
            )

    async def _post(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
    ) -> None:
        ctype = headers.get("content-type", "")
        json_type = "application/json"
        if ctype != json_type and ctype.split(";")[0].strip().lower() != json_type:
            await json_response(
                send, _error(rpc.INVALID_REQUEST, "Content-Type must be application/json", 415), 415
            )
            return
        json_ok, sse_ok = self.negotiate(headers.get("accept", "*/*"))
        if not (json_ok or sse_ok):
            message = "Accept must allow application/json or text/event-stream"
            await json_response(send, _error(rpc.INVALID_REQUEST, message, 406), 406)
            return
        cap = self.options.max_body
        body = await read_body(receive, cap)
        self.bodies.read(scope)
        if body is None:
            frame = _error(rpc.INVALID_REQUEST, f"request body over {cap} bytes", 413)
            await json_response(send, frame, 413)
            return
        if self.stopped:  # no session, task or store is touched any more
            refused = closed_reply(body)
            if refused is None:
                await plain_response(send, 202, b"")
            else:
                await json_response(send, refused, refused.status)
            return
        # Set by an authentication middleware: it binds requestState and legacy sessions.
        principal = scope.get("mcpgen.principal")
        found = await self.legacy_sessions.of_post(headers, body, principal)
        if found is False:
            await json_response(send, _UNKNOWN_SESSION, 404)
            return
        http_session = found  # None: a fresh core session, a channel only if it goes legacy
        session = self.server.session() if found is None else found.core
        channel = _Stream(self, headers, principal, scope)
        channel.body = body  # (for the reply to work a drain cancels: its id)
        channel.auth = scope.get("mcpgen.auth")  # the verified token (`_http_auth`)
        channel.peer = peer_of(scope)  # an anonymous client's quotas count against it
        if not sse_ok:  # JSON only: requests to the client need the session's GET stream
            channel.streaming = False
            # (with a shared log a GET stream writes logged events only: refused too)
            logged = self.legacy_sessions.shared is not None
            channel.detour = None if http_session is None or logged else http_session.to_stream
        outcome = session.receive(body, channel)
        if type(outcome) is Refusal and await refuse(self.gate, scope, send, outcome):
            return  # judged by the core: the token lacks a scope the request needs
        extra: list[tuple[bytes, bytes]] = []
        if http_session is not None:
            await self.legacy_sessions.persist(http_session)
        elif session.legacy_version is not None:  # an initialize handshake
            http_session = await self.legacy_sessions.open(session, principal, client_of(scope))
            extra.append((b"mcp-session-id", http_session.id.encode()))
        if outcome is None:
            await plain_response(send, 202, b"", extra)
            return
        # A reply lands in `channel.final`, pending work runs as `task`; either way the
        # response below is chosen from what the channel holds.
        handle = deliver(outcome, channel)
        final = channel.final
        if handle is None and final is not None and not (channel.events and sse_ok):
            # A reply at once with nothing before it (the common case): JSON, right here.
            await json_response(send, final, _status_of(final), extra)
            return
        task = None if handle is None else _task(handle)
        # The session whose SSE events carry ids (from the event store), if any.
        legacy_ids = http_session.id if http_session is not None and resumable(session) else None
        # modern: the client disconnecting cancels the request
        on_disconnect = None if http_session is not None else session.close
        await self._respond(
            send, receive, channel, task, extra, legacy_ids, sse_ok, json_ok, on_disconnect
        )

    def negotiate(self, accept: str) -> tuple[bool, bool]:
        """(may answer JSON, may answer SSE) for an Accept header (memoised)."""
        return self.verdicts.negotiate(accept)

    async def _respond(
        self,
        send: Send,
        receive: Receive,
        channel: _Stream,
        task: Work | None,
        extra: list[tuple[bytes, bytes]],
        legacy_ids: str | None,
        sse_ok: bool,
        json_ok: bool,
        on_disconnect: Callable[[], None] | None,
    ) -> None:
        """The response to one delivered outcome: JSON when the reply is there before
        anything else was emitted, 202 when pending work ended without one, else SSE
        (or, for a client that takes no SSE, JSON once the reply comes)."""
        # Answer in JSON if the work ends before it emits anything; a modern client that
        # leaves meanwhile (a timeout, a cancel) cancels it.
        silent = task is not None and json_ok and not channel.events and channel.final is None
        if silent and await work_or_leave(task, channel, receive, on_disconnect):  # type: ignore[arg-type]
            return
        done = task is None or task.done()
        unanswered(self, channel, task)
        final = channel.final
        if done and final is not None and not (channel.events and sse_ok):
            await json_response(send, final, _status_of(final), extra)
            return
        ended_silent = task is not None and done and _settled(task) is None
        if ended_silent and json_ok and final is None and not channel.events:
            await plain_response(send, 202, b"", extra)
            return
        if not sse_ok:
            final = await self._await_final(channel, task)
            await json_response(
                send, final, _status_of(final), extra
            ) if final else await plain_response(send, 202, b"", extra)
            return
        await self._sse(send, channel, task, extra, legacy_ids, receive, on_disconnect)

    async def _await_final(self, channel: _Stream, task: Work | None) -> bytes | None:
        self.streams.add(channel)  # until its reply comes (a drain's, at the latest)
        try:
            if task is not None:
                await asyncio.wait({task})
                if channel.final is None and _settled(task) is None:
                    return None  # cancelled, or nothing to say
            while channel.final is None:
                channel.wakeup.clear()
                await channel.wakeup.wait()
        finally:
            self.streams.discard(channel)
        return channel.final

    async def _sse(
        self,
        send: Send,
        channel: _Stream,
        task: Work | None,
        extra: list[tuple[bytes, bytes]],
        legacy_ids: str | None,
        receive: Receive,
        on_disconnect: Callable[[], None] | None = None,
    ) -> None:
        writer = self.legacy_sessions.writer(send, legacy_ids)
        await writer.start(extra)
        self.streams.add(channel)
        watcher = asyncio.ensure_future(disconnected(receive))
        try:
            await self.pump(writer, channel, task, watcher, on_disconnect)
        except OSError:  # the client went away mid-write
            if on_disconnect is not None:
                on_disconnect()
        finally:
            channel.closed = True
            self.streams.discard(channel)
            watcher.cancel()
            await writer.end()

    async def pump(
        self,
        writer: SseWriter,
        channel: _Stream,
        task: Work | None,
        watcher: asyncio.Future[Any],
        on_disconnect: Callable[[], None] | None,
    ) -> None:
        """Write `channel`'s events, then its reply, to the stream. Pending work writes
        its reply to the channel before its task ends, so a task that ended without one
        ends the stream, unless it deferred the reply (which then comes later)."""
        keepalive = self.options.keepalive_seconds
        watched = (watcher, task) if task is not None else (watcher,)
        for future in watched:
            future.add_done_callback(channel.wake)
        try:
            while True:
                while channel.events:
                    await writer.event(channel.events.pop(0))
                if channel.final is not None:
                    await writer.event(channel.final)
                    return
                if task is not None and task.done():
                    if unanswered(self, channel, task):
                        continue
                    if _settled(task) is not DEFERRED:
                        return  # cancelled or nothing to say
                    task = None
                    continue
                woken = watcher.done() or await channel.idle(keepalive)
                if watcher.done():
                    if on_disconnect is not None:
                        on_disconnect()  # modern: the client closing the stream cancels it
                    return
                if not woken:
                    await writer.comment(b"keep-alive")
        finally:
            for future in watched:
                future.remove_done_callback(channel.wake)
