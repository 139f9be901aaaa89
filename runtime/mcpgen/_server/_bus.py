"""What a worker does with bus events: the open `subscriptions/listen` streams and the
rule of which events each one wants.

The `Bus` itself (and the event types) live in `mcpgen.stores`. `Server.notify_*`
and the task runner publish there; the core subscribes once and fans every event out
to its own listen streams and legacy sessions, so an event published by any worker
reaches the streams of all of them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from mcpgen._server._call import Channel
from mcpgen.stores import ChangeEvent

__all__ = ["PROMPTS", "RESOURCE", "RESOURCES", "TOOLS", "ChangeEvent", "Listener", "uri_covers"]

TOOLS, PROMPTS, RESOURCES, RESOURCE = "tools", "prompts", "resources", "resource"


def uri_covers(subscribed: str, updated: str) -> bool:
    """An update to a sub-resource reaches a subscription to its parent URI."""
    if updated == subscribed:
        return True
    parent = subscribed if subscribed.endswith("/") else subscribed + "/"
    return updated.startswith(parent)


class Listener(msgspec.Struct):
    """One open `subscriptions/listen` stream."""

    request_id: str | int  # the listen request's id: every notification is tagged with it
    channel: Channel
    tools: bool
    prompts: bool
    resources: bool
    uris: tuple[str, ...]
    extra: dict[str, Any]  # extension filters (e.g. "taskIds": a frozenset of task ids)

    def wants(self, event: ChangeEvent) -> bool:
        if event.kind == TOOLS:
            return self.tools
        if event.kind == PROMPTS:
            return self.prompts
        if event.kind == RESOURCES:
            return self.resources
        return event.uri is not None and any(uri_covers(u, event.uri) for u in self.uris)

    def follows(self, task_id: str) -> bool:
        return task_id in self.extra.get("taskIds", ())
