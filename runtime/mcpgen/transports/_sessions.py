"""Legacy Streamable HTTP sessions (2025-03-26 ... 2025-11-25): state in a store, live
objects in this process, and the resumable GET stream.

A legacy session has two halves. Its state (version, client capabilities, log level,
subscriptions, owner) is plain data in a `mcpgen.stores.SessionStore`, which any
worker can read: `LegacySessions` creates it on `initialize`, saves it when a message
changed it, deletes it on DELETE, and rebuilds a core session from it for a request
whose session is not live here. What lives only here: the core session (in-flight
work, requests out to the client), the open GET streams and the frames waiting for
one. `LiveSessions` (`_live`) holds those, bounded like the store: idle ones expire and
past the bound the least recently used without an open stream goes, the creating
client's own first (its core session closed).
A session without a record is over, never rebuilt from a live copy (a DELETE on any
worker is final); `_keepalive` keeps the record of one with an open GET stream fresh.

A session belongs to the principal that created it: for anyone else it does not exist
(404), so a stolen or guessed id is no use without the credentials.

Several workers (a shared `SessionStore` and `Bus`): a session is live on every worker
a request of it reached. A handler waiting for the client's answer to a server-to-client
request waits on the worker that sent it; the answer may be POSTed to any other. So a
POST that carries answers (JSON-RPC responses) is handled here as usual and also
published as a `ReplyEvent`; every worker hands the ones it did not publish to its
live copy of the session, whose bridge acts only on ids it sent (bridge ids are
unique per worker).

Event ids (2025-11-25 sessions): each SSE stream of a session has a stream id
`<session id>/<random>` in the `EventStore`, so a `Last-Event-ID` names its session and
a replay is refused to anyone else (`owns`). Session ids are URL-safe tokens, so they
hold no `/`. A GET with a `Last-Event-ID` the store knows for this session replays the
events after it, then goes on, under the same stream id, as the session's standalone
stream; an unknown, forgotten or foreign id opens a fresh stream. Either way the frames
no stream has carried yet (the backlog) come next. With a shared bus and event store
(several workers), the standalone frames and their backlog live in one log per session
instead (`_standalone`), so that each reaches the client once, from any worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Literal, Protocol

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._server import Channel, Handle
from mcpgen._server._masking import UNAVAILABLE
from mcpgen.stores import (
    EventStore,
    InMemoryEventStore,
    InMemorySessionStore,
    SessionStore,
    StoreUnavailableError,
)
from mcpgen.transports._asgi import (
    Receive,
    ResponseStream,
    Send,
    SseWriter,
    disconnected,
    json_response,
    plain_response,
)
from mcpgen.transports._keepalive import Keepalive, end_streams
from mcpgen.transports._live import BACKLOG, HttpSession, LiveSessions, new_session_id
from mcpgen.transports._port import ServerPort, SessionPort
from mcpgen.transports._replies import ReplyRouter, answers, bus_of
from mcpgen.transports._standalone import (
    Standalone,
    log_id,
    missed_events,
    new_stream_id,
    owns,
)
from mcpgen_types.latest import INTERNAL_ERROR

__all__ = [
    "HttpSession",
    "LegacySessions",
    "LiveSessions",
    "SessionChannel",
    "new_session_id",
    "new_stream_id",
    "owns",
    "unavailable",
]

log = logging.getLogger("mcpgen.server")
_GONE = rpc.error_frame(None, rpc.INVALID_REQUEST, "unknown or expired session", status=404)
Scope = dict[str, Any]


def _error(message: str, status: int) -> rpc.ErrorFrame:
    return rpc.error_frame(None, rpc.INVALID_REQUEST, message, status=status)


async def unavailable(send: Send, exc: StoreUnavailableError) -> None:
    """Answer 503 with a JSON-RPC error: a shared store (Redis) is down. Nothing when
    the response had already started (a stream that was writing just ends)."""
    log.warning("%s", exc)  # the store's address and error: for the operator only
    frame = rpc.error_frame(None, INTERNAL_ERROR, UNAVAILABLE, status=503)
    with contextlib.suppress(RuntimeError, OSError):  # it had started: nothing more to say
        await json_response(send, frame, 503, [(b"retry-after", b"1")])


class _Spawner(Protocol):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


class _Options(Protocol):
    """The app options the sessions read (an `HttpOptions`)."""

    @property
    def session_idle_seconds(self) -> float: ...
    @property
    def max_sessions(self) -> int: ...
    @property
    def max_sessions_per_client(self) -> int | None: ...
    @property
    def sse_retry_ms(self) -> int: ...


class _App(_Spawner, Protocol):
    """What the sessions use of the HTTP app."""

    server: ServerPort
    streams: set[ResponseStream]  # every open streamed response, for a graceful shutdown
    stopping: bool  # draining: no new stream that would only wait

    async def pump(
        self,
        writer: SseWriter,
        channel: ResponseStream,
        task: asyncio.Task[Any] | None,
        watcher: asyncio.Future[Any],
        on_disconnect: Callable[[], None] | None,
    ) -> None: ...


class SessionChannel(Channel):
    """Server-initiated frames of a legacy session: to its newest GET stream, or kept
    (bounded) until one opens."""

    def __init__(
        self, session: HttpSession, spawner: _Spawner, shared: Standalone | None = None
    ) -> None:
        self.session = session
        self.spawner = spawner
        self.shared = shared  # several workers: frames of bus events go through a log

    def notify(self, frame: bytes) -> None:
        session = self.session
        if self.shared is not None and self.shared.hand_in(session, frame):
            return
        if session.streams:
            session.streams[-1].notify(frame)
        elif len(session.backlog) < BACKLOG:
            session.backlog.append(frame)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Handle:
        return self.spawner.spawn(coro)


def resumable(core: SessionPort) -> bool:
    """Whether the session's SSE events carry ids (and so can be replayed)."""
    return proto.sse_event_ids(core.legacy_version)


class LegacySessions:
    """The session half of the Streamable HTTP app (see the module docstring)."""

    def __init__(
        self,
        app: _App,
        options: _Options,
        store: SessionStore | None = None,
        events: EventStore | None = None,
    ) -> None:
        self.app = app
        idle, most = options.session_idle_seconds, options.max_sessions
        # (`is None`: an empty in-memory store has a length of 0, so it is falsy)
        self.store: SessionStore = (
            InMemorySessionStore(idle_timeout=idle, max_sessions=most) if store is None else store
        )
        self.events: EventStore = InMemoryEventStore() if events is None else events
        self.live = LiveSessions(idle_timeout=idle, max_sessions=most)
        self.keepalive = Keepalive(self.store, self.live, app, idle)  # for GET-only clients
        self.retry_ms = options.sse_retry_ms
        self.quota = options.max_sessions_per_client
        self.replies = ReplyRouter(app, self.live, self._channel)
        self.shared: Standalone | None = None

    def _channel(self, live: HttpSession) -> Channel:
        return SessionChannel(live, self.app, self.shared)

    def _bind(self) -> None:
        """Subscribe to the server's bus, once its core exists (serving has started)."""
        self.replies.bind()
        if self.shared is None:
            self.shared = Standalone.of(bus_of(self.app.server), self.events, self.app)

    def writer(self, send: Send, session_id: str | None) -> SseWriter:
        """The writer of a POST's SSE response: in a resumable session (`session_id`), a
        stream of its own in the event store, which a GET of the session can replay;
        else (None) events without ids."""
        if session_id is None:
            return SseWriter(send, self.retry_ms)
        return SseWriter(send, self.retry_ms, self.events, new_stream_id(session_id))

    async def of_post(
        self, headers: Mapping[str, str], body: bytes, principal: str | None
    ) -> HttpSession | Literal[False] | None:
        """The legacy session a POST belongs to: None for none (no `Mcp-Session-Id`, or
        a modern request, which ignores it: `_protocol.sessionless`), False when the id
        names no session of `principal` (404)."""
        session_id = headers.get("mcp-session-id")
        if session_id is None or proto.sessionless(headers):
            return None
        found = await self.find(session_id, principal)
        if found is None and not proto.sessionless(headers, body):
            return False
        replies = None if found is None else answers(body)
        if replies is not None:
            self.replies.forward(session_id, replies)
        return found

    async def find(self, session_id: str, principal: str | None) -> HttpSession | None:
        """The session `session_id` of `principal`, live here: held already, or rebuilt
        from its stored state. None: unknown, expired, deleted, or someone else's."""
        state = await self.store.load(session_id)  # a load also keeps it from idling out
        live = self.live.get(session_id)
        if state is None:  # gone (deleted anywhere, or idle): never rebuilt from a copy
            if live is not None:
                end_streams(live)
                self.live.remove(session_id)
            return None
        if state.principal != principal:
            return None
        if live is None:
            self._bind()
            core = self.app.server.session()
            core.from_state(state)
            live = self.live.add(core, principal, session_id)
            core.attach(self._channel(live))
            live.saved = state
        elif state != live.saved:  # another worker changed it: continue from its state
            live.core.from_state(state)
            live.saved = state
        return live

    async def open(
        self, core: SessionPort, principal: str | None, client: str | None = None
    ) -> HttpSession:
        """The session `initialize` just created in `core`: live here, stored, counted
        against `client` (`_limits.client_of`) and its quota."""
        self._bind()
        live = self.live.add(core, principal, client=client)
        core.attach(self._channel(live))
        live.saved = core.to_state(live.id, principal)
        assert live.saved is not None  # the core holds an initialized legacy session
        await self.store.create(live.saved, client=client, quota=self.quota)
        return live

    async def persist(self, live: HttpSession) -> None:
        """Save the session's state when the message just handled changed it."""
        state = live.core.to_state(live.id, live.principal)
        if state is not None and state != live.saved:
            live.saved = state
            await self.store.save(state)

    # -- the endpoint's GET and DELETE ------------------------------------------------------
    async def get(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        """GET: the session's standalone stream (see the module docstring)."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            frame = _error("GET needs an Mcp-Session-Id (legacy sessions only)", 405)
            await json_response(send, frame, 405, [(b"allow", b"POST")])
            return
        accept = headers.get("accept", "")
        if "text/event-stream" not in accept and "*/*" not in accept:
            await json_response(send, _error("GET needs Accept: text/event-stream", 406), 406)
            return
        if self.app.stopping:  # the drain ended the streams: the client goes elsewhere
            await json_response(send, _error("shutting down", 503), 503)
            return
        live = await self.find(session_id, scope.get("mcpgen.principal"))
        if live is None:
            await json_response(send, _GONE, 404)
            return
        events: EventStore | None = None
        stream_id, missed = "", None
        ids = resumable(live.core)
        last_event_id = headers.get("last-event-id") if ids else None
        if last_event_id is not None:
            missed = await missed_events(self.events, session_id, last_event_id)
        app = self.app
        stream = ResponseStream(app, None, None)
        first: bytes | None = None
        writer: SseWriter
        if self.shared is not None:
            other = missed is not None and missed.stream_id != log_id(session_id)
            replayed = missed.events if missed is not None and other else None
            writer, first, replay = await self.shared.open(
                live, stream, send, self.retry_ms, last_event_id, replayed, ids
            )
        else:
            if ids:
                events = self.events
                stream_id = missed.stream_id if missed is not None else new_stream_id(session_id)
            live.streams.append(stream)
            stream.events.extend(live.take_backlog())
            writer = SseWriter(send, self.retry_ms, events, stream_id)
            replay = missed.events if missed is not None else []
        app.streams.add(stream)
        self.keepalive.watch(live)
        watcher = asyncio.ensure_future(disconnected(receive))
        try:
            await writer.start([], first, replay)
            await app.pump(writer, stream, None, watcher, None)
        except OSError:  # the client went away mid-write
            pass
        finally:
            stream.closed = True
            app.streams.discard(stream)
            watcher.cancel()
            if stream in live.streams:
                live.streams.remove(stream)
            if self.shared is None:  # queued here but never written: for the next stream
                live.requeue(stream.events)
            await writer.end()

    async def delete(self, scope: Scope, send: Send, headers: dict[str, str]) -> None:
        """DELETE: forget the session everywhere and end its GET streams."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            frame = _error("DELETE needs an Mcp-Session-Id", 405)
            await json_response(send, frame, 405, [(b"allow", b"POST")])
            return
        live = await self.find(session_id, scope.get("mcpgen.principal"))
        if live is None:
            await json_response(send, _GONE, 404)
            return
        await self.store.delete(session_id)
        self.live.remove(session_id)  # closes the core session: its work is cancelled
        end_streams(live)
        await plain_response(send, 200, b"")
