"""A legacy client's answers, routed to the worker that awaits them.

With several workers (a shared `SessionStore` and `Bus`), a legacy session is live on
every worker a request of it reached. A handler waiting for the client's answer to a
server-to-client request waits on the worker that sent the request; the client may
POST the answer to any other. So a POST that carries answers (JSON-RPC responses) is
handled where it lands, as always, and also published as a `ReplyEvent`; every worker
hands the ones it did not publish itself to its live copy of the session, whose
bridge acts only on request ids it sent (each bridge's ids start at a random point,
`_server/_bridge`). With the in-memory bus the only subscriber is the publisher, which
skips its own events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar, cast

import msgspec

from mcpgen._server import Channel
from mcpgen.stores import Bus, BusEvent, ReplyEvent
from mcpgen.transports._port import SessionPort

__all__ = ["ReplyRouter", "answers"]

_MAX_ECHOES = 10_000


class _Probe(msgspec.Struct):
    method: str | None = None


_probe = msgspec.json.Decoder(_Probe).decode
_members = msgspec.json.Decoder(list[msgspec.Raw]).decode


def _answer(frame: bytes) -> bool:
    try:
        return _probe(frame).method is None
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


def answers(body: bytes) -> bytes | None:
    """The client's answers (JSON-RPC responses) `body` holds, as a frame of their own:
    `body` itself when it is one, a batch of its responses alone when it is a batch
    with any; None without. Only these travel to the other workers: a request or a
    notification beside them in a batch is handled where it landed, never once more
    by every worker that holds the session."""
    if b'"result"' not in body and b'"error"' not in body:
        return None  # a request (the common case), without decoding
    if body.lstrip()[:1] != b"[":
        return body if _answer(body) else None
    try:
        members = [bytes(m) for m in _members(body)]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    kept = [m for m in members if _answer(m)]
    if not kept:
        return None
    return body if len(kept) == len(members) else b"[" + b",".join(kept) + b"]"


def bus_of(server: object) -> Bus | None:
    """The bus of a `Server` (its core's); None for a server port without one."""
    bus = getattr(getattr(server, "core", None), "bus", None)
    return cast("Bus", bus) if callable(getattr(bus, "subscribe", None)) else None


class _Live(Protocol):
    core: SessionPort


L = TypeVar("L", bound=_Live)
L_co = TypeVar("L_co", bound=_Live, covariant=True)


class _Sessions(Protocol[L_co]):
    def peek(self, session_id: str) -> L_co | None: ...


class _App(Protocol):
    @property
    def server(self) -> object: ...


class ReplyRouter(Generic[L]):
    """Publishes the answers POSTed here; delivers the ones other workers published to
    this worker's live sessions (through `channel_of(session)`)."""

    def __init__(
        self, app: _App, sessions: _Sessions[L], channel_of: Callable[[L], Channel]
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.channel_of = channel_of
        self._bus: Bus | None = None
        self._echoes: dict[tuple[str, bytes], int] = {}  # ReplyEvents we published

    def bind(self) -> None:
        """Subscribe to the server's bus (once; its core exists once serving starts)."""
        if self._bus is None:
            self._bus = bus_of(self.app.server)
            if self._bus is not None:
                self._bus.subscribe(self._on_event)

    def forward(self, session_id: str, body: bytes) -> None:
        self.bind()
        if self._bus is None:
            return
        if len(self._echoes) > _MAX_ECHOES:  # echoes lost in a bus outage: let them go
            self._echoes.clear()
        key = (session_id, body)
        self._echoes[key] = self._echoes.get(key, 0) + 1
        self._bus.publish(ReplyEvent(session_id, body))

    def _on_event(self, event: BusEvent) -> None:
        if type(event) is not ReplyEvent:
            return
        key = (event.session_id, event.frame)
        seen = self._echoes.pop(key, 0)
        if seen:  # our own: handled when it was POSTed here
            if seen > 1:
                self._echoes[key] = seen - 1
            return
        live = self.sessions.peek(event.session_id)
        if live is not None:
            live.core.receive(event.frame, self.channel_of(live))
