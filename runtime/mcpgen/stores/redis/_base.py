"""What every Redis store shares: the connection, the key prefix, error mapping.

A store is built without I/O (a worker may build its server before any event loop
runs); the client connects on first use. A Redis that cannot be reached, or stops
answering within `timeout` seconds, raises `StoreUnavailableError`: the HTTP app answers
it with 503, and the next request tries again on a fresh connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from redis import exceptions as rex

from mcpgen.stores._interfaces import StoreUnavailableError
from mcpgen.stores.redis._connect import CLUSTER, client_for, kind, redacted

__all__ = ["DEFAULT_PREFIX", "SEQUENCE", "Arg", "Connection", "guard", "redacted"]

Arg = bytes | str | int | float  # a Lua script argument

SEQUENCE = "bus-seq"  # (under the prefix) the number of the bus's newest message

_REFUSALS = frozenset({"NOREPLICAS", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"})

DEFAULT_PREFIX = "mcpgen:"
"""What every Redis key and channel name of the stores starts with, unless told otherwise."""


class Connection:
    """One Redis URL and key prefix, shared by the stores of a server. The redis-py
    client is made on first use, in the event loop that uses it (`_connect.client_for`:
    one server, a Sentinel-managed primary or a Cluster).

    Under a Cluster the prefix is a hash tag (`mcpgen:` becomes `{mcpgen:}`, unless it
    holds braces already): every key of the stores then lives in one hash slot, so each
    script and multi-key command stays on one node, and the bus's channels are served by
    that node too."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 2.0) -> None:
        self.url = url
        self.layout = kind(url)
        if self.layout == CLUSTER and "{" not in prefix:
            prefix = "{" + prefix + "}"
        self.prefix = prefix
        self.timeout = timeout
        self._client: aioredis.Redis | None = None

    @property
    def client(self) -> aioredis.Redis:
        if self._client is None:
            self._client = client_for(
                self.url,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                retry_on_timeout=False,
                health_check_interval=30,
            )
        return self._client

    def pubsub_client(self) -> aioredis.Redis:
        """A client for a subscriber: no read timeout (it waits for messages)."""
        return client_for(self.url, socket_connect_timeout=self.timeout, health_check_interval=30)

    async def ping(self) -> None:
        """Raise `StoreUnavailableError` with the reason when Redis does not answer."""
        async with guard(self.url):
            await self.client.ping()

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


@asynccontextmanager
async def guard(url: str) -> AsyncIterator[None]:
    """Turn redis-py's connection failures into `StoreUnavailableError`."""
    try:
        yield
    except (rex.ConnectionError, rex.TimeoutError, OSError, TimeoutError) as exc:
        raise StoreUnavailableError(f"redis at {redacted(url)} is unavailable: {exc}") from exc
    except rex.ResponseError as exc:
        # Refusals of a Redis that cannot take writes for now (a demoted primary, a
        # primary without enough replicas, a cluster between masters): unavailable too
        if not isinstance(exc, rex.ReadOnlyError | rex.ClusterError | rex.TryAgainError):
            words = str(exc).split()
            if not _REFUSALS.intersection(words[:1] + words[-12:]):
                raise
        raise StoreUnavailableError(f"redis at {redacted(url)} is unavailable: {exc}") from exc
