"""Where shared server state lives: the interfaces (`SessionStore`, `Bus`, `TaskStore`,
`EventStore`, `KeyRing`, `ReplayCache`, and the policies' `RateLimitStore` and
`ResponseStore`) and their in-memory implementations.

A deployment with several workers plugs shared implementations of the same interfaces
in; `tests/stores/` holds the contract every implementation passes. This package knows
no transport and no handler: it stores plain data.
"""

from __future__ import annotations

from mcpgen.stores._bus import InMemoryBus
from mcpgen.stores._events import InMemoryEventStore
from mcpgen.stores._interfaces import (
    Bus,
    BusEvent,
    ChangeEvent,
    EventStore,
    KeyRing,
    Replay,
    ReplyEvent,
    SessionState,
    SessionStore,
    StoreUnavailableError,
    TaskEvent,
    TaskState,
    TaskStore,
    Unsubscribe,
)
from mcpgen.stores._keys import InMemoryKeyRing
from mcpgen.stores._limits import Bucket, InMemoryRateLimitStore, RateLimitStore
from mcpgen.stores._quota import client_key
from mcpgen.stores._replay import InMemoryReplayCache, ReplayCache
from mcpgen.stores._responses import InMemoryResponseStore, ResponseStore
from mcpgen.stores._sessions import InMemorySessionStore
from mcpgen.stores._tasks import InMemoryTaskStore

__all__ = [
    "Bucket",
    "Bus",
    "BusEvent",
    "ChangeEvent",
    "EventStore",
    "InMemoryBus",
    "InMemoryEventStore",
    "InMemoryKeyRing",
    "InMemoryRateLimitStore",
    "InMemoryReplayCache",
    "InMemoryResponseStore",
    "InMemorySessionStore",
    "InMemoryTaskStore",
    "KeyRing",
    "RateLimitStore",
    "Replay",
    "ReplayCache",
    "ReplyEvent",
    "ResponseStore",
    "SessionState",
    "SessionStore",
    "StoreUnavailableError",
    "TaskEvent",
    "TaskState",
    "TaskStore",
    "Unsubscribe",
    "client_key",
]
