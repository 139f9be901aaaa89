"""What every Redis store shares: the connection, the key prefix, error mapping.

A store is built without I/O (a worker may build its server before any event loop
runs); the client connects on first use. A Redis that cannot be reached, or stops
answering within `timeout` seconds, raises `StoreUnavailableError`: the HTTP app answers
it with 503, and the next request tries again on a fresh connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from redis import exceptions as rex
from redis.commands.core import AsyncScript

from mcpgen.stores._interfaces import StoreUnavailableError
from mcpgen.stores.redis._connect import CLUSTER, client_for, kind, node_client, redacted

__all__ = [
    "BUS",
    "DEFAULT_PREFIX",
    "SEQUENCE",
    "Arg",
    "Connection",
    "Step",
    "guard",
    "pipelined",
    "redacted",
]

Arg = bytes | str | int | float  # a Lua script argument

SEQUENCE = "bus-seq"  # (under the bus's group) the number of the bus's newest message
BUS = "bus"  # the group of the bus, its channels and the event store (one slot)

# Error replies of a Redis that cannot serve for now, whatever the command: a demoted
# primary, too few replicas, a cluster between masters, memory full (maxmemory with
# noeviction), snapshots failing (MISCONF), a script that runs too long (BUSY), a
# dataset loading, an ACL that does not let the stores' user in.
_REFUSALS = frozenset(
    {"NOREPLICAS", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"}
    | {"OOM", "MISCONF", "BUSY", "LOADING", "NOPERM", "NOAUTH", "WRONGPASS"}
)
_REFUSED = (
    rex.ReadOnlyError,
    rex.ClusterError,
    rex.TryAgainError,
    rex.OutOfMemoryError,
    rex.NoPermissionError,
)

DEFAULT_PREFIX = "mcpgen:"
"""What every Redis key and channel name of the stores starts with, unless told otherwise."""


class Connection:
    """One Redis URL and key prefix, shared by the stores of a server. The redis-py
    client is made on first use, in the event loop that uses it (`_connect.client_for`:
    one server, a Sentinel-managed primary or a Cluster).

    Keys come in groups (`under`): the keys of one session, one task, one response
    group, and the few indexes that span entities. Under a Cluster each group is a hash
    tag of its own, so different sessions and tasks land on different masters while
    every script and multi-key command of one group stays in one slot. A prefix that
    holds braces itself pins every key to its slot (the layout before groups)."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 2.0) -> None:
        self.url = url
        self.layout = kind(url)
        self.prefix = prefix
        self.spread = self.layout == CLUSTER and "{" not in prefix
        self.timeout = timeout
        self._client: aioredis.Redis | None = None

    def under(self, group: str) -> str:
        """What the keys of `group` start with: the prefix, and under a Cluster the
        group as a hash tag (`mcpgen:{t:abc}`), so they share one slot. Elsewhere the
        prefix alone: key names stay what they were before groups."""
        return f"{self.prefix}{{{group}}}" if self.spread else self.prefix

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

    async def subscriber(self, channel: str) -> aioredis.Redis:
        """A client for a subscriber of `channel`: no read timeout (it waits for
        messages). Under a spread Cluster, a client of the master serving `channel`'s
        slot as the cluster says now (the bus subscribes there with sharded pub/sub;
        after a failover, asked again, it is the new master)."""
        options: dict[str, Any] = {"socket_connect_timeout": self.timeout}
        options["health_check_interval"] = 30
        if not self.spread:
            return client_for(self.url, **options)
        cluster: Any = self.client
        await cluster.initialize()
        await cluster.nodes_manager.initialize()  # (not the map from before a failover)
        node = cluster.get_node_from_key(channel)
        return node_client(self.url, node.host, node.port, **options)

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
    except (rex.RedisClusterException, rex.ClusterError) as exc:  # no node for a slot, none up
        raise StoreUnavailableError(f"redis at {redacted(url)} is unavailable: {exc}") from exc
    except rex.ResponseError as exc:
        # Refusals of a Redis that cannot serve for now (`_REFUSALS`): unavailable too
        if not isinstance(exc, _REFUSED):
            words = str(exc).split()
            if not _REFUSALS.intersection(words[:1] + words[-12:]):
                raise
        raise StoreUnavailableError(f"redis at {redacted(url)} is unavailable: {exc}") from exc


Step = tuple[AsyncScript | None, Sequence[str], Sequence[Arg]]
"""One command of `pipelined`: a script, its keys and arguments; or None, no keys and
the command itself."""


async def pipelined(
    connection: Connection, steps: Sequence[Step], *, optional: int = 0
) -> list[Any]:
    """Run `steps` in one round trip (a pipeline without MULTI: under a Cluster the
    client sends each node its share at once), their replies in order. The steps a
    Redis refused for a script it lacks run again, sent whole (each step runs once
    in all). An error reply raises, as `guard` maps it, except for
    the last `optional` steps: their error is their reply (bookkeeping that may fail,
    e.g. on a master failing over, without failing the rest)."""
    client = connection.client
    async with guard(connection.url):
        if optional and connection.spread:
            # Apart, at once: a Cluster pipeline fails whole when one of its nodes is
            # down, and the optional steps may be on another master than the rest.
            must, may = steps[: len(steps) - optional], steps[len(steps) - optional :]
            both = await asyncio.gather(
                _send(client, must), _send(client, may), return_exceptions=True
            )
            if isinstance(both[0], BaseException):
                raise both[0]
            extra = [both[1]] * optional if isinstance(both[1], BaseException) else both[1]
            done = [*both[0], *extra]
        else:
            done = await _send(client, steps)
        lost = [i for i, reply in enumerate(done) if _no_script(reply)]
        if lost:  # sent whole (EVAL), which caches them on the nodes that lacked them
            again = await _send(client, [steps[i] for i in lost], whole=True)
            for i, reply in zip(lost, again, strict=True):
                done[i] = reply
        for reply in done[: len(done) - optional]:
            if isinstance(reply, Exception):
                raise reply
    return done


async def _send(client: Any, steps: Sequence[Step], whole: bool = False) -> list[Any]:
    pipe = client.pipeline(transaction=False)
    for script, keys, args in steps:
        if script is None:
            pipe.execute_command(*args)
        elif whole:
            pipe.execute_command("EVAL", script.script, len(keys), *keys, *args)
        else:
            pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
    done: list[Any] = await pipe.execute(raise_on_error=False)
    return done


def _no_script(reply: object) -> bool:
    return isinstance(reply, rex.NoScriptError) or (
        isinstance(reply, rex.ResponseError) and str(reply).startswith("NOSCRIPT")
    )
