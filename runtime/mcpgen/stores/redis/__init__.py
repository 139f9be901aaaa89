"""The stores on Redis (the `redis` extra: redis-py's asyncio client), for several
workers behind one endpoint: `RedisSessionStore`, `RedisBus`, `RedisTaskStore`,
`RedisEventStore` (and `RedisReplayCache`, for DPoP proofs), all on one `Connection`
(a URL and a key prefix); for the policies of `mcpgen.middleware`,
`RedisRateLimitStore` and `RedisResponseStore`.

`RedisStores.from_url(url)` builds the four together; `Server(redis=url)` (or
`MCPGEN_REDIS_URL`) does it for a server. State is encoded with msgspec (msgpack),
never pickled; every key starts with the prefix (`mcpgen:` unless told otherwise), so
several deployments can share one Redis under different prefixes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import msgspec

from mcpgen.stores.redis._base import DEFAULT_PREFIX, Connection, redacted
from mcpgen.stores.redis._bus import RedisBus
from mcpgen.stores.redis._events import RedisEventStore
from mcpgen.stores.redis._limits import RedisRateLimitStore
from mcpgen.stores.redis._replay import RedisReplayCache
from mcpgen.stores.redis._responses import RedisResponseStore
from mcpgen.stores.redis._sessions import RedisSessionStore
from mcpgen.stores.redis._tasks import LEASE_LOST, RedisTaskStore

__all__ = [
    "Connection",
    "DEFAULT_PREFIX",
    "LEASE_LOST",
    "RedisBus",
    "RedisEventStore",
    "RedisRateLimitStore",
    "RedisReplayCache",
    "RedisResponseStore",
    "RedisSessionStore",
    "RedisStores",
    "RedisTaskStore",
    "redacted",
]

S = TypeVar("S")  # the server a lifespan is entered for


class RedisStores(msgspec.Struct, frozen=True):
    """The four shared stores of one server, on one connection."""

    connection: Connection
    sessions: RedisSessionStore
    bus: RedisBus
    tasks: RedisTaskStore
    events: RedisEventStore

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        session_idle_seconds: float = 1800.0,
        max_sessions: int = 100_000,
        task_lease_seconds: float = 15.0,
        session_stale_seconds: float = 1.0,
    ) -> RedisStores:
        """The four stores on `url`. `session_stale_seconds` bounds how far behind Redis
        a worker's cached session record may be (0: no cache, one round trip a request;
        see `RedisSessionStore`)."""
        connection = Connection(url, prefix=prefix)
        bus = RedisBus(connection)
        sessions = RedisSessionStore(
            connection,
            idle_timeout=session_idle_seconds,
            max_sessions=max_sessions,
            bus=bus,
            stale_after=session_stale_seconds,
        )
        return cls(
            connection,
            sessions,
            bus,
            RedisTaskStore(connection, lease=task_lease_seconds),
            RedisEventStore(connection),
        )

    def checked(
        self, inner: Callable[[S], AbstractAsyncContextManager[Any]] | None
    ) -> Callable[[S], AbstractAsyncContextManager[Any]]:
        """A server lifespan that first makes sure Redis answers (so a worker that
        cannot reach it fails at startup, with the reason), then enters `inner`."""

        @asynccontextmanager
        async def lifespan(server: S) -> AsyncIterator[Any]:
            await self.connection.ping()
            if inner is None:
                yield None
                return
            async with inner(server) as value:
                yield value

        return lifespan
