"""The in-memory bus: publish/subscribe within one process.

Delivery is synchronous. An event published by a subscriber while another event is
being delivered is queued and delivered after it, so every subscriber sees one
publisher's events in publish order even when callbacks publish in turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from mcpgen.stores._interfaces import BusEvent, Unsubscribe

__all__ = ["InMemoryBus"]

Callback = Callable[[BusEvent], None]


class InMemoryBus:
    """A `Bus` for a single process: subscribers are this process's callbacks."""

    def __init__(self) -> None:
        self._callbacks: list[Callback] = []
        self._queue: deque[BusEvent] = deque()
        self._delivering = False

    def publish(self, event: BusEvent) -> None:
        self._queue.append(event)
        if self._delivering:
            return  # published from inside a callback: the running loop below delivers it
        self._delivering = True
        try:
            while self._queue:
                queued = self._queue.popleft()
                for callback in tuple(self._callbacks):
                    callback(queued)
        finally:
            self._delivering = False
            # A callback raised: what it left queued goes out with the next publish,
            # still in order, rather than being lost.

    def subscribe(self, callback: Callback) -> Unsubscribe:
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe
