"""Legacy session state in this process's memory: the `SessionStore` of one worker."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

import msgspec

from mcpgen.stores._interfaces import SessionState

__all__ = ["InMemorySessionStore"]

# States are kept encoded, as a shared store keeps them: a caller that changes a state
# it loaded (or saved) changes nothing here until it saves again, and a state that
# would not survive msgspec fails here, in tests, rather than in production on Redis.
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(SessionState).decode


class InMemorySessionStore:
    """Sessions by id, bounded: one unused for `idle_timeout` seconds (by `clock`) is
    gone, and creating one past `max_sessions` evicts the least recently used, of the
    creating client's own first (`SessionStore.create`, which also applies its quota).

    Ids are the caller's to mint (>= 128 bits of randomness); the store trusts them."""

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
        # id -> (encoded state, last use); least recently used first
        self._states: OrderedDict[str, tuple[bytes, float]] = OrderedDict()
        self._client_of: dict[str, str] = {}  # id -> the client it counts against
        # client -> its sessions' ids, least recently used first
        self._by_client: dict[str, OrderedDict[str, None]] = {}

    def __len__(self) -> int:
        return len(self._states)

    async def create(
        self, state: SessionState, *, client: str | None = None, quota: int | None = None
    ) -> None:
        self.sweep()
        mine = self._by_client.get(client) if client is not None else None
        if mine and quota is not None:
            while mine and len(mine) >= quota:
                self._forget(next(iter(mine)))
        while self._states and len(self._states) >= self.max_sessions:
            self._forget(next(iter(mine)) if mine else next(iter(self._states)))
        self._states[state.id] = (_encode(state), self.clock())
        self._states.move_to_end(state.id)
        if client is not None:
            self._client_of[state.id] = client
            self._by_client.setdefault(client, OrderedDict())[state.id] = None

    async def load(self, session_id: str) -> SessionState | None:
        entry = self._states.get(session_id)
        if entry is None:
            return None
        now = self.clock()
        if now - entry[1] > self.idle_timeout:
            self._forget(session_id)
            return None
        self._states[session_id] = (entry[0], now)
        self._used(session_id)
        return _decode(entry[0])

    async def save(self, state: SessionState) -> None:
        entry = self._states.get(state.id)
        if entry is None:
            return
        now = self.clock()
        if now - entry[1] > self.idle_timeout:
            self._forget(state.id)
            return
        self._states[state.id] = (_encode(state), now)  # saving is use, like loading
        self._used(state.id)

    async def delete(self, session_id: str) -> bool:
        return self._forget(session_id)

    def _used(self, session_id: str) -> None:
        self._states.move_to_end(session_id)
        client = self._client_of.get(session_id)
        if client is not None:
            self._by_client[client].move_to_end(session_id)

    def _forget(self, session_id: str) -> bool:
        if self._states.pop(session_id, None) is None:
            return False
        client = self._client_of.pop(session_id, None)
        if client is not None:
            mine = self._by_client[client]
            del mine[session_id]
            if not mine:
                del self._by_client[client]
        return True

    def sweep(self) -> int:
        """Forget every idle session now; returns how many went. Entries are in order
        of last use, so the walk stops at the first live one."""
        deadline = self.clock() - self.idle_timeout
        gone = 0
        while self._states:
            session_id, (_, seen) = next(iter(self._states.items()))
            if seen >= deadline:
                break
            self._forget(session_id)
            gone += 1
        return gone
