"""`Client.listen`'s two ways to hear about changes, over one `Connection`.

Modern: a `subscriptions/listen` request whose answer is a stream of notifications
(its acknowledgement first), ended by the server or by cancelling the request. Legacy:
the session's own notifications, filtered, with `resources/subscribe` for the URIs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from mcpgen._errors import ClientError, ConfigurationError, McpError
from mcpgen.client._connection import Connection, Note, Stream
from mcpgen_types import latest as t

__all__ = ["changes", "session_notifications", "subscription"]


def changes(
    connection: Connection,
    tools: bool,
    prompts: bool,
    resources: bool,
    resource_uris: Sequence[str],
    task_ids: Sequence[str],
) -> AsyncIterator[Note]:
    """The notifications `Client.listen` asks for, heard the way the connection's era
    allows: a legacy session's own notifications, filtered by method, or a modern
    subscription's filters (`taskIds` declaring the Tasks extension)."""
    core = connection.core
    if task_ids and core.era != "modern":
        raise ConfigurationError("task notifications exist only in the modern era")
    if core.era == "legacy":
        wanted = {
            "notifications/tools/list_changed": tools,
            "notifications/prompts/list_changed": prompts,
            "notifications/resources/list_changed": resources,
            "notifications/resources/updated": bool(resource_uris),
        }
        chosen = frozenset(method for method, on in wanted.items() if on)
        return session_notifications(connection, chosen, resource_uris)
    filters: dict[str, Any] = {}
    if tools:
        filters["toolsListChanged"] = True
    if prompts:
        filters["promptsListChanged"] = True
    if resources:
        filters["resourcesListChanged"] = True
    if resource_uris:
        filters["resourceSubscriptions"] = list(resource_uris)
    caps = None
    if task_ids:
        filters["taskIds"] = list(task_ids)
        caps = core.task_capabilities
    return subscription(connection, filters, caps, connection.timeout)


async def subscription(
    connection: Connection,
    filters: dict[str, Any],
    capabilities: dict[str, Any] | None,
    timeout: float,
) -> AsyncIterator[Note]:
    """The notifications of one `subscriptions/listen` request (modern)."""
    core = connection.core
    rid, sent, frame = core.request(
        "subscriptions/listen", {"notifications": filters}, capabilities=capabilities
    )
    queue: Stream = asyncio.Queue()
    connection.streams[rid] = queue
    try:
        await connection.link.send(frame, core.headers("subscriptions/listen", sent), rid)
        first = await asyncio.wait_for(queue.get(), timeout)
        if isinstance(first, ClientError | McpError):  # refused: the server's error
            raise first
        if not isinstance(first, t.SubscriptionsAcknowledgedNotification):
            raise ClientError(
                f"subscriptions/listen: expected an acknowledgement first, got {first!r}"
            )
        while (note := await queue.get()) is not None:
            if isinstance(note, ClientError | McpError):
                raise note
            yield note
    finally:
        connection.streams.pop(rid, None)
        if not connection.closed:
            await connection.cancel(rid)


async def session_notifications(
    connection: Connection, wanted: frozenset[str], uris: Sequence[str]
) -> AsyncIterator[Note]:
    """The `wanted` notifications of a legacy session, subscribed to `uris` meanwhile."""
    queue: Stream = asyncio.Queue()
    connection.session_events.append(queue)
    for uri in uris:
        await connection.request("resources/subscribe", {"uri": uri})
    try:
        while (note := await queue.get()) is not None:
            if isinstance(note, ClientError | McpError):
                raise note
            method = (
                note.get("method") if isinstance(note, dict) else type(note).__struct_config__.tag
            )
            if method in wanted:
                yield note
    finally:
        connection.session_events.remove(queue)
        if not connection.closed:
            for uri in uris:
                with contextlib.suppress(Exception):
                    await connection.request("resources/unsubscribe", {"uri": uri})
