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

__all__ = ["DEFAULT_PREFIX", "SEQUENCE", "Arg", "Connection", "guard", "redacted"]

Arg = bytes | str | int | float  # a Lua script argument

SEQUENCE = "bus-seq"  # (under the prefix) the number of the bus's newest message

DEFAULT_PREFIX = "mcpgen:"
"""What every Redis key and channel name of the stores starts with, unless told otherwise."""


def redacted(url: str) -> str:
    """`url` without its password, for error messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.partition(":")[0]
    return f"{scheme}://{user + ':***@' if user else '***@'}{host}"


class Connection:
    """One Redis URL and key prefix, shared by the stores of a server. The redis-py
    client is made on first use, in the event loop that uses it."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 2.0) -> None:
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self._client: aioredis.Redis | None = None

    @property
    def client(self) -> aioredis.Redis:
        if self._client is None:
            self._client = aioredis.Redis.from_url(
                self.url,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                retry_on_timeout=False,
                health_check_interval=30,
            )
        return self._client

    def pubsub_client(self) -> aioredis.Redis:
        """A client for a subscriber: no read timeout (it waits for messages)."""
        return aioredis.Redis.from_url(
            self.url, socket_connect_timeout=self.timeout, health_check_interval=30
        )

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
