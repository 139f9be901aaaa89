"""The five interfaces behind which shared server state lives.

Each is a small `Protocol` with an in-memory implementation in this package; a shared
one (Redis, for several workers) implements the same methods and passes the same
contract tests (`tests/stores/`). The state that crosses these interfaces is plain data:
msgspec structs and bytes, never live objects, so any implementation can encode it
with msgspec (never pickle).

- `SessionStore`: legacy (`initialize`) sessions, by session id.
- `Bus`: publish/subscribe of the events every worker must see (list and resource
  changes, task status, a legacy client's reply routed to whoever awaits it).
- `TaskStore`: task records of the Tasks extension (status, result, input requests).
- `EventStore`: the events of a resumable SSE stream, replayed after `Last-Event-ID`.
- `KeyRing`: the keys that seal `requestState` and cursors, with rotation.

Storage interfaces are async (a shared store is a network call away). The key ring
and the bus's `publish`/`subscribe` are synchronous: they sit on the per-message path
or are called from synchronous code, and a networked bus buffers on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import msgspec

__all__ = [
    "Bus",
    "BusEvent",
    "ChangeEvent",
    "EventStore",
    "KeyRing",
    "ReplyEvent",
    "Replay",
    "SessionState",
    "SessionStore",
    "StoreUnavailableError",
    "TaskEvent",
    "TaskState",
    "TaskStore",
    "Unsubscribe",
]


class StoreUnavailableError(Exception):
    """A shared store or bus cannot be reached (or did not answer in time). The HTTP
    app answers the request with a JSON-RPC error and status 503; nothing is retried
    for the client, which may send the request again."""


# -- sessions ----------------------------------------------------------------------------------
class SessionState(msgspec.Struct, kw_only=True):
    """What an `initialize` handshake created and later messages change: enough for any
    worker to serve the session's next request."""

    id: str  # >= 128 bits of randomness, visible ASCII
    version: str  # the negotiated legacy revision
    client_capabilities: dict[str, Any] = msgspec.field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    initialized: bool = False  # notifications/initialized seen
    log_rank: int = 0  # logging/setLevel, as a rank of mcpgen._protocol.LOG_LEVELS
    subscriptions: list[str] = msgspec.field(default_factory=list)  # resources/subscribe
    principal: str | None = None  # who created it; nobody else may use it


class SessionStore(Protocol):
    """Where legacy HTTP sessions live between requests, keyed by their
    `Mcp-Session-Id`: in the worker's memory, or shared by every worker."""

    async def create(
        self, state: SessionState, *, client: str | None = None, quota: int | None = None
    ) -> None:
        """Store a new session (an implementation may evict idle ones to make room).

        `client` is who the session counts against (`mcpgen.stores.client_key`: the
        principal, or an anonymous client's address; None: nobody). When `client`
        already holds `quota` sessions, its own least recently used one goes first;
        and when the store is full, a session of another client goes only if `client`
        holds none: one client's creations never push out another's sessions while it
        has any of its own to give up."""
        ...

    async def load(self, session_id: str) -> SessionState | None:
        """The session, or None when unknown, deleted or expired; a load counts as use
        (it restarts the idle timeout)."""
        ...

    async def save(self, state: SessionState) -> None:
        """Replace a session's state after a message changed it (unknown ids: ignored)."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Forget a session; False when it was not there."""
        ...


# -- bus ---------------------------------------------------------------------------------------
class ChangeEvent(msgspec.Struct, frozen=True, tag="change"):
    """A list changed (`kind` tools | prompts | resources) or one resource was updated
    (`kind` resource, with its `uri`)."""

    kind: str
    uri: str | None = None


class TaskEvent(msgspec.Struct, frozen=True, tag="task"):
    """A task's status changed; `detail` is the notification's params as builtins."""

    task_id: str
    principal: str | None
    detail: dict[str, Any]


class ReplyEvent(msgspec.Struct, frozen=True, tag="reply"):
    """A legacy client's response frame to a server-to-client request, for the worker
    that holds the session's request awaiting it; or (`session_id` "task/<task id>")
    the answers of a tasks/update, for the worker that runs the task."""

    session_id: str
    frame: bytes


BusEvent = ChangeEvent | TaskEvent | ReplyEvent
"""Anything published on a `Bus`: a list or resource change, a task's new status, or a
reply meant for the worker waiting on it."""

Unsubscribe = Callable[[], None]
"""Returned by `Bus.subscribe`: call it to stop receiving events."""


class Bus(Protocol):
    """Fan-out of events between the connections of one process, or of every worker
    when shared: list changes, task updates and replies reach whoever listens."""

    def publish(self, event: BusEvent) -> None:
        """Deliver to every subscriber (of every worker, for a shared bus), in publish
        order per publisher; never blocks."""
        ...

    def subscribe(self, callback: Callable[[BusEvent], None]) -> Unsubscribe:
        """Call `callback` with every event published from now on."""
        ...


# -- tasks -------------------------------------------------------------------------------------
class TaskState(msgspec.Struct, kw_only=True):
    """One task as any worker can answer `tasks/get` for it."""

    id: str  # unguessable: knowing it is all a caller needs besides being its principal
    principal: str | None
    status: str  # working | input_required | completed | failed | cancelled
    status_message: str | None = None
    created_ms: int  # wall clock, milliseconds since the epoch
    updated_ms: int
    ttl_ms: int | None  # from creation; None: kept until deleted
    poll_ms: int
    owner: str = ""  # the worker running it
    input_requests: dict[str, Any] = msgspec.field(default_factory=dict)  # outstanding, by key
    result: dict[str, Any] | None = None  # a completed task's CallToolResult, as builtins
    error: dict[str, Any] | None = None  # a failed task's JSON-RPC error object


class TaskStore(Protocol):
    """The records of Tasks-extension tasks, readable by any worker: status, result or
    error, outstanding input requests, and who may see them."""

    async def create(
        self, state: TaskState, *, client: str | None = None, most: int | None = None
    ) -> bool:
        """Store a new running task unless `client` (`client_key`; None: the clients
        nobody knows, together) already has `most` tasks running (working or
        input_required) here: then False, and nothing is stored. None: no bound."""
        ...

    async def put(self, state: TaskState) -> TaskState | None:
        """Create or replace a task record; None once written. A record whose status
        is final (completed, failed, cancelled) is never replaced: then nothing is
        written and the stored record comes back, so the writer (e.g. a worker whose
        handler finished after another worker cancelled the task) takes its status.
        The check and the write are one atomic step on every worker."""
        ...

    async def get(self, task_id: str) -> TaskState | None:
        """The record, or None when unknown, deleted or past its ttl."""
        ...

    async def delete(self, task_id: str) -> None: ...


# -- SSE events --------------------------------------------------------------------------------
class Replay(msgspec.Struct, frozen=True):
    """What a reconnecting client missed: the stream its last event belonged to, and
    the events after it, oldest first, as (event id, frame)."""

    stream_id: str
    events: list[tuple[str, bytes]]


class EventStore(Protocol):
    """The events sent on resumable 2025-11-25 SSE streams, kept so that a client
    reconnecting with `Last-Event-ID` receives what it missed."""

    async def append(self, stream_id: str, frame: bytes) -> str:
        """Keep one event of a stream; returns its id (unique across streams, opaque)."""
        ...

    async def replay(self, last_event_id: str) -> Replay | None:
        """The events after `last_event_id` on its stream, or None when the id is
        unknown or its stream has been forgotten."""
        ...


# -- keys --------------------------------------------------------------------------------------
class KeyRing(Protocol):
    """The secrets that seal and open `requestState` tokens: the newest seals, older
    ones still open during a rotation. Workers sharing requests share the ring."""

    def sealing_key(self) -> tuple[str, bytes]:
        """(key id, secret) that seals new tokens: the newest key."""
        ...

    def opening_key(self, key_id: str) -> bytes | None:
        """The secret of `key_id` while it may still open tokens, else None."""
        ...
