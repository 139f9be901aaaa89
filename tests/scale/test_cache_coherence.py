"""The session cache of each worker (`mcpgen.stores.redis`): what one worker changes or
deletes, the others stop answering from memory within the staleness bound (normally at
once); a worker that lost its subscription, or whose Redis hangs, reads Redis again;
uses answered from memory still keep a session alive, and only while it is used."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import pytest

from mcpgen.stores import SessionState, StoreUnavailableError
from mcpgen.stores.redis import Connection, RedisSessionStore, RedisStores
from mcpgen.stores.redis._sessions import _USE
from tests.scale.harness import fresh_redis_url
from tests.scale.measure import Monitor, build
from tests.stores.redis_server import server as redis_server
from tests.transports.asgidriver import Exchange, initialize, post, rpc

pytestmark = pytest.mark.needs_redis

T = TypeVar("T")
BOUND = 1.0  # the default staleness bound (`session_stale_seconds`)
CALL = rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 30))


def state(session_id: str, **changes: Any) -> SessionState:
    return SessionState(id=session_id, version="2025-11-25", **changes)


def two(**options: Any) -> tuple[RedisStores, RedisStores, str, str]:
    """Two workers' stores on one Redis and prefix; also the URL and the prefix."""
    url, prefix = fresh_redis_url(), f"cache-{uuid.uuid4().hex}:"
    a = RedisStores.from_url(url, prefix=prefix, **options)
    b = RedisStores.from_url(url, prefix=prefix, **options)
    return a, b, url, prefix


async def warm(store: RedisSessionStore, session_id: str) -> None:
    """Have `store` hold `session_id` and answer it from memory."""
    await store.ready()
    assert await store.load(session_id) is not None
    assert store.cache is not None
    assert session_id in store.cache.entries


WRITE_BACK = hashlib.sha1(_USE.encode()).hexdigest()  # the batched uses (not a read)


def reads(commands: list[str], key: str) -> list[str]:
    """The round trips that read or wrote the record under `key` (uses written back
    in batches aside)."""
    return [c for c in commands if '"EVALSHA"' in c and f'"{key}"' in c and WRITE_BACK not in c]


async def within(seconds: float, check: Callable[[], Awaitable[bool]]) -> float:
    """Poll `check` until it holds; how long that took (fails past `seconds`)."""
    start = time.monotonic()
    while not await check():
        assert time.monotonic() - start < seconds, "not within the bound"
        await asyncio.sleep(0.005)
    return time.monotonic() - start


def _redis_command(command: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", redis_server().port)) as sock:
        sock.sendall(command)
        return sock.recv(64)


def test_a_change_on_one_worker_reaches_the_cache_of_the_other() -> None:
    a, b, _, prefix = two()

    async def main() -> None:
        await a.sessions.create(state("s1", principal="alice"))
        await warm(b.sessions, "s1")
        monitor = Monitor()
        assert await b.sessions.load("s1") == state("s1", principal="alice")
        assert reads(monitor.stop(), prefix + "session:s1") == []  # from B's memory
        changed = state("s1", principal="alice", log_rank=5, subscriptions=["file:///x"])
        await a.sessions.save(changed)

        async def seen() -> bool:
            return await b.sessions.load("s1") == changed

        assert await within(BOUND, seen) < BOUND
        assert await b.sessions.load("s1") == changed  # and kept: B caches the new one

    run(main())


def test_a_delete_on_one_worker_is_refused_on_the_other_once_answered() -> None:
    url = fresh_redis_url()
    worker_a, worker_b = build(url), build(url)

    async def main() -> None:
        app_a, app_b = worker_a.asgi_app(), worker_b.asgi_app()
        session = await initialize(app_a, principal="alice")
        assert (await post(app_b, session, CALL, "alice"))[0] == 200
        assert worker_b.redis is not None
        await warm(worker_b.redis.sessions, session["mcp-session-id"])
        assert (await post(app_b, session, CALL, "alice"))[0] == 200
        # The principal binding holds for a record answered from memory.
        assert (await post(app_b, session, CALL, "mallory"))[0] == 404
        assert (await post(app_b, session, CALL))[0] == 404
        deleting = Exchange(app_a, "DELETE", session, principal="alice")
        assert (await deleting.start())[0] == 200
        await deleting.body()

        # Answered once B has dropped its copy (`_removals`): refused there at once.
        assert (await post(app_b, session, CALL, "alice"))[0] == 404
        assert (await post(app_a, session, CALL, "alice"))[0] == 404

    run(main())


def test_a_worker_that_lost_its_subscription_drops_its_cache_and_reads_redis() -> None:
    a, b, _, prefix = two()

    async def main() -> None:
        await a.sessions.create(state("s1"))
        await warm(b.sessions, "s1")
        cache = b.sessions.cache
        assert cache is not None
        assert _redis_command(b"CLIENT KILL TYPE pubsub\r\n").startswith(b":")

        async def lost() -> bool:
            return not cache.live

        await within(2.0, lost)
        assert cache.entries == {}
        changed = state("s1", log_rank=3)
        await a.sessions.save(changed)  # its news is missed: B is not subscribed
        monitor = Monitor()
        assert await b.sessions.load("s1") == changed  # read from Redis
        assert len(reads(monitor.stop(), prefix + "session:s1")) == 1
        await warm(b.sessions, "s1")  # subscribed again: it caches again

    run(main())


@pytest.mark.slow
def test_a_hung_redis_is_noticed_within_the_bound() -> None:
    """A connection that hangs without failing: no heartbeat comes back, and after
    the bound the worker reads Redis, which times out (503 for the client)."""
    a, b, _, _ = two()

    async def main() -> None:
        await a.sessions.create(state("s1"))
        await warm(b.sessions, "s1")
        assert _redis_command(b"CLIENT PAUSE 3000 ALL\r\n").startswith(b"+OK")
        paused = time.monotonic()

        async def answered_from_memory() -> float:
            while True:
                asked = time.monotonic()
                try:
                    assert await b.sessions.load("s1") == state("s1")
                except StoreUnavailableError:
                    return asked
                await asyncio.sleep(0.01)

        try:
            assert await answered_from_memory() - paused < BOUND + 0.1
        finally:
            await asyncio.sleep(max(0.0, paused + 3.1 - time.monotonic()))

    run(main())


@pytest.mark.slow
def test_uses_answered_from_the_cache_keep_the_session_alive() -> None:
    idle = 1.5
    a, b, url, prefix = two(session_idle_seconds=idle)
    plain = RedisSessionStore(Connection(url, prefix=prefix), idle_timeout=idle)  # no cache

    async def main() -> None:
        await a.sessions.create(state("busy"))
        await a.sessions.create(state("quiet"))
        await warm(b.sessions, "busy")
        monitor = Monitor()
        end = time.monotonic() + 2 * idle
        while time.monotonic() < end:  # used for longer than the idle timeout
            assert await b.sessions.load("busy") is not None
            await asyncio.sleep(0.05)
        commands = monitor.stop()
        assert reads(commands, prefix + "session:busy") == []  # every use answered from memory
        written = [c for c in commands if '"ZADD"' in c and '"busy"' in c]
        assert 0 < len(written) < 2 * idle / 0.1  # the uses went to Redis, in batches
        assert await plain.load("busy") is not None  # another worker finds it alive
        assert await plain.load("quiet") is None  # unused: gone
        await asyncio.sleep(idle + 0.4)  # now nobody uses it
        assert await plain.load("busy") is None

    run(main())
