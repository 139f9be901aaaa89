"""The legacy sessions live in this process (both HTTP transports), bounded.

`LiveSessions` holds each session's live half (its core session, open streams, the
frames waiting for a stream): idle ones expire, and past `max_sessions` one without
an open stream is evicted, its core session closed (its work cancelled). Which one:
the creating client's own least recently used first (`mcpgen.stores.client_key`), so
a client opening session after session cannot end another client's work while it
holds sessions of its own; another client's only when it holds none.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpgen._server._state import random_token
from mcpgen.stores import SessionState
from mcpgen.transports._asgi import ResponseStream
from mcpgen.transports._port import SessionPort

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["BACKLOG", "HttpSession", "LiveSessions", "new_session_id"]

BACKLOG = 1000  # frames kept for a GET stream that is not open (yet)


def new_session_id() -> str:
    # 32 random bytes, URL-safe: visible ASCII (0x21-0x7E) as the spec requires.
    return random_token(32)


class HttpSession:
    """One legacy session live in this process."""

    __slots__ = ("backlog", "client", "core", "id", "last_seen", "principal", "saved", "streams")

    def __init__(
        self,
        session_id: str,
        core: SessionPort,
        principal: str | None = None,
        client: str | None = None,
    ) -> None:
        self.id = session_id
        self.core = core
        self.principal = principal  # who created it: nobody else may use it
        self.client = client  # whom it counts against (`LiveSessions`)
        self.streams: list[ResponseStream] = []  # open GET streams, newest last
        self.backlog: list[bytes] = []  # server-initiated frames while no GET stream is open
        self.saved: SessionState | None = None  # as last read from or written to the store
        self.last_seen = time.monotonic()

    def take_backlog(self) -> list[bytes]:
        backlog, self.backlog = self.backlog, []
        return backlog

    def to_stream(self, frame: bytes) -> bool:
        """Write `frame` to the newest open GET stream; False when none is open here."""
        if not self.streams:
            return False
        self.streams[-1].notify(frame)
        return True

    def requeue(self, frames: list[bytes]) -> None:
        """Put frames a closed stream never wrote back before the backlog."""
        if frames:
            self.backlog = (frames + self.backlog)[:BACKLOG]


class LiveSessions:
    """The sessions this process holds (see the module docstring)."""

    def __init__(
        self,
        *,
        idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.clock = clock
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()
        self._held: dict[str, int] = {}  # client -> how many sessions it holds here

    def __len__(self) -> int:
        return len(self._sessions)

    def held_by(self, client: str | None) -> int:
        """How many sessions `client` holds here."""
        return 0 if client is None else self._held.get(client, 0)

    def add(
        self,
        core: SessionPort,
        principal: str | None = None,
        session_id: str | None = None,
        client: str | None = None,
    ) -> HttpSession:
        """Hold `core` under `session_id` (a new id when None), counted against `client`."""
        self.sweep()
        while len(self._sessions) >= self.max_sessions and self._evict_one(client):
            pass
        session = HttpSession(session_id or new_session_id(), core, principal, client)
        session.last_seen = self.clock()
        self._sessions[session.id] = session
        if client is not None:
            self._held[client] = self._held.get(client, 0) + 1
        return session

    def get(self, session_id: str) -> HttpSession | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if self._expired(session):
            self._drop(session_id)
            return None
        session.last_seen = self.clock()
        self._sessions.move_to_end(session_id)
        return session

    def peek(self, session_id: str) -> HttpSession | None:
        """The session if held here, without counting this as use."""
        return self._sessions.get(session_id)

    def remove(self, session_id: str) -> HttpSession | None:
        return self._drop(session_id)

    def held(self) -> list[HttpSession]:
        """Every session live here (a draining worker ends their GET streams)."""
        return list(self._sessions.values())

    def sweep(self) -> int:
        expired = [sid for sid, s in self._sessions.items() if self._expired(s)]
        for sid in expired:
            self._drop(sid)
        return len(expired)

    def _expired(self, session: HttpSession) -> bool:
        return not session.streams and self.clock() - session.last_seen > self.idle_timeout

    def _evictable(self, client: str | None) -> Iterator[HttpSession]:
        """Sessions that may go to make room for `client`'s: its own while it holds
        any, least recently used first; else anyone's. None without an open stream."""
        mine = self.held_by(client) > 0
        return (
            s for s in self._sessions.values() if not s.streams and (not mine or s.client == client)
        )

    def _evict_one(self, client: str | None) -> bool:
        for session in self._evictable(client):
            self._drop(session.id)
            return True
        return False

    def _drop(self, session_id: str) -> HttpSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            client = session.client
            if client is not None:
                left = self._held[client] - 1
                if left:
                    self._held[client] = left
                else:
                    del self._held[client]
            session.core.close()
        return session
