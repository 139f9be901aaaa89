"""Legacy Streamable HTTP sessions (2025-03-26 ... 2025-11-25) behind a store interface."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from mcpgen._server._state import random_token

__all__ = ["HttpSession", "InMemorySessionStore", "SessionStore"]


class HttpSession:
    """One `initialize` handshake's state on the HTTP side: the core session plus the
    standalone GET streams that carry server-initiated frames."""

    __slots__ = ("core", "id", "last_seen", "streams")

    def __init__(self, session_id: str, core: Any) -> None:
        self.id = session_id
        self.core = core
        self.streams: list[Any] = []  # open GET streams, newest last
        self.last_seen = time.monotonic()


class SessionStore(Protocol):
    """Where legacy sessions live. Implementations must mint unguessable ids."""

    def add(self, core_session: Any) -> HttpSession: ...

    def get(self, session_id: str) -> HttpSession | None: ...

    def remove(self, session_id: str) -> HttpSession | None: ...

    def __len__(self) -> int: ...


class InMemorySessionStore:
    """Sessions in this process, bounded: idle ones expire, and past `max_sessions` the
    least recently used one without an open stream is evicted."""

    def __init__(
        self,
        *,
        idle_timeout: float = 1800.0,
        max_sessions: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
        on_evict: Callable[[HttpSession], None] | None = None,
    ) -> None:
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self.clock = clock
        self.on_evict = on_evict
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def add(self, core_session: Any) -> HttpSession:
        self.sweep()
        while len(self._sessions) >= self.max_sessions and self._evict_one():
            pass
        # 32 random bytes, URL-safe: visible ASCII (0x21-0x7E) as the spec requires.
        session = HttpSession(random_token(32), core_session)
        session.last_seen = self.clock()
        self._sessions[session.id] = session
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

    def remove(self, session_id: str) -> HttpSession | None:
        return self._drop(session_id)

    def sweep(self) -> int:
        expired = [sid for sid, s in self._sessions.items() if self._expired(s)]
        for sid in expired:
            self._drop(sid)
        return len(expired)

    def _expired(self, session: HttpSession) -> bool:
        return not session.streams and self.clock() - session.last_seen > self.idle_timeout

    def _evict_one(self) -> bool:
        for sid, session in self._sessions.items():  # least recently used first
            if not session.streams:
                self._drop(sid)
                return True
        return False

    def _drop(self, session_id: str) -> HttpSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.core.close()
            if self.on_evict is not None:
                self.on_evict(session)
        return session
