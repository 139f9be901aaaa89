"""Change notifications: a bus interface, an in-memory bus, and listen subscriptions.

`Server.notify_*` publish change events on the bus; every process subscribed to the
bus fans them out to its own modern `subscriptions/listen` streams and legacy
sessions. The in-memory bus delivers within the process; a shared bus (e.g. Redis)
implements the same two methods to reach other workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import msgspec

__all__ = ["ChangeEvent", "InMemoryBus", "SubscriptionBus"]

TOOLS, PROMPTS, RESOURCES, RESOURCE = "tools", "prompts", "resources", "resource"


class ChangeEvent(msgspec.Struct, frozen=True):
    kind: str  # "tools" | "prompts" | "resources" (list changed) | "resource" (one updated)
    uri: str | None = None


class SubscriptionBus(Protocol):
    def publish(self, event: ChangeEvent) -> None: ...

    def subscribe(self, callback: Callable[[ChangeEvent], None]) -> Callable[[], None]:
        """Register a callback; returns a function that unregisters it."""
        ...


class InMemoryBus:
    """Delivers synchronously to callbacks in this process."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[[ChangeEvent], None]] = []

    def publish(self, event: ChangeEvent) -> None:
        for callback in list(self._callbacks):
            callback(event)

    def subscribe(self, callback: Callable[[ChangeEvent], None]) -> Callable[[], None]:
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe


def uri_covers(subscribed: str, updated: str) -> bool:
    """An update to a sub-resource reaches a subscription to its parent URI."""
    if updated == subscribed:
        return True
    parent = subscribed if subscribed.endswith("/") else subscribed + "/"
    return updated.startswith(parent)


class Listener(msgspec.Struct):
    """One open `subscriptions/listen` stream."""

    request_id: Any
    channel: Any
    tools: bool
    prompts: bool
    resources: bool
    uris: tuple[str, ...]
    extra: dict[str, Any]  # extension filters (e.g. task ids)

    def wants(self, event: ChangeEvent) -> bool:
        if event.kind == TOOLS:
            return self.tools
        if event.kind == PROMPTS:
            return self.prompts
        if event.kind == RESOURCES:
            return self.resources
        return event.uri is not None and any(uri_covers(u, event.uri) for u in self.uris)
