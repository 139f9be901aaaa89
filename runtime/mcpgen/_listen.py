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

from mcpgen._connection import Connection, Note, Stream
from mcpgen._errors import ClientError
from mcpgen_types import latest as t

__all__ = ["session_notifications", "subscription"]


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
        if isinstance(first, ClientError):
            raise first
        if not isinstance(first, t.SubscriptionsAcknowledgedNotification):
            raise ClientError(
                f"subscriptions/listen: expected an acknowledgement first, got {first!r}"
            )
        while (note := await queue.get()) is not None:
            if isinstance(note, ClientError):
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
            if isinstance(note, ClientError):
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
