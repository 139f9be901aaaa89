"""An open GET stream keeps its legacy session alive, and ends when the session is gone.

A client that only listens on its GET stream sends no request, so nothing would load
the session's record and the store would let it idle out. One sweep per worker runs
while any of its legacy sessions has an open GET stream: every `period` seconds it
loads the record of each such session (a load counts as use). When the record is
gone (a DELETE on another worker, an operator, the store's bound), the session is
over here too: its streams end and its live copy goes. A session is never written
back from a live copy: a deleted session stays deleted.

The period is a quarter of the idle timeout, at most `PROMPT` seconds, so that a
DELETE made on another worker ends this worker's streams within a few seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from mcpgen.stores import SessionStore, StoreUnavailableError
from mcpgen.transports._asgi import ResponseStream

__all__ = ["PROMPT", "Keepalive", "end_streams"]

log = logging.getLogger("mcpgen.server")
PROMPT = 2.0  # seconds: the longest a stream outlives its session's record
_FLOOR = 0.05


class _Live(Protocol):
    id: str
    streams: list[ResponseStream]


class _Held(Protocol):
    def peek(self, session_id: str) -> object: ...
    def remove(self, session_id: str) -> object: ...


class _Spawner(Protocol):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


def end_streams(live: _Live) -> None:
    """End every GET stream of a session that is over (as a DELETE does)."""
    for stream in live.streams:
        stream.reply(b"")


class Keepalive:
    """The sweep of one app's legacy sessions with an open GET stream."""

    def __init__(
        self, store: SessionStore, live: _Held, spawner: _Spawner, idle_timeout: float
    ) -> None:
        self.store = store
        self.live = live
        self.spawner = spawner
        self.period = max(_FLOOR, min(idle_timeout / 4, PROMPT))
        self._watched: dict[str, _Live] = {}
        self._task: asyncio.Task[Any] | None = None

    def watch(self, live: _Live) -> None:
        """`live` has an open GET stream: keep its record fresh until none is open."""
        self._watched[live.id] = live
        task = self._task
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            self._task = self.spawner.spawn(self._sweep())

    async def _sweep(self) -> None:
        watched = self._watched
        while watched:
            await asyncio.sleep(self.period)
            for session_id, live in list(watched.items()):
                if not live.streams or self.live.peek(session_id) is not live:
                    del watched[session_id]  # (a new stream watches it again)
                    continue
                try:
                    state = await self.store.load(session_id)
                except StoreUnavailableError as exc:  # an outage is not a deletion
                    log.warning("session %s not refreshed: %s", session_id[:8], exc)
                    continue
                if state is None:
                    watched.pop(session_id, None)
                    end_streams(live)
                    if self.live.peek(session_id) is live:
                        self.live.remove(session_id)  # closes its core session
