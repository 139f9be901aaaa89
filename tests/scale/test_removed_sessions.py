"""A legacy session removed through one worker is answered by no worker once the removal
has answered: a DELETE's 200, or the `initialize` whose quota evicted the session
(`stores/redis/_removals`, docs/guide/scale-out.md "Each worker's copy of the sessions").

Two workers of one server in this process, each its own `Server` and its own Redis
connection (two store clients on the test redis-server), driven in-process. B holds
the session in its cache. The test holds back the news B's subscription delivers from
the removal on (in order, as a slow link would): the window in which the old code let
B answer from its copy, made certain instead of rare. Under load, with a Redis Cluster
forwarding the news from the session's master, the window was wide enough for the
official conformance suite to see a 200 after its DELETE.

With the fix, the deleting worker answers only once every worker whose cache may still
hold the record has acknowledged the removal on the bus, or could no longer trust its
copy anyway (its last heartbeat older than the staleness bound): B's held news makes
the DELETE wait, and it answers as soon as B has the news.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import pytest

from mcpgen import Server
from mcpgen.stores import SessionState
from mcpgen.stores.redis import RedisSessionStore, RedisStores
from mcpgen.stores.redis._cache import SessionCache
from tests.scale.harness import KEY, fresh_redis_url
from tests.scale.measure import Monitor, heartbeat
from tests.transports.asgidriver import Exchange, initialize, post, rpc

pytestmark = pytest.mark.needs_redis

T = TypeVar("T")
WAIT = 10.0  # seconds: a bound for each step, not a timing
BOUND = 6.0  # a staleness bound long enough to tell an acknowledgement from its end


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 90))


class Gate:
    """Holds back what B's subscription delivers to its session cache, from the news of
    `session_id`'s removal on, in order, until `open`."""

    def __init__(self, cache: SessionCache, session_id: str) -> None:
        self.deliver = cache.message
        self.session_id = session_id.encode()
        self.held: list[bytes] = []
        self.holding = False
        self.reached = asyncio.Event()
        cache.message = self.message  # type: ignore[method-assign]

    def message(self, data: bytes) -> None:
        kind, _, rest = data.partition(b" ")
        if kind == b"d" and rest == self.session_id:
            self.holding = True
            self.reached.set()
        if self.holding:
            self.held.append(data)
        else:
            self.deliver(data)

    def open(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for data in held:
            self.deliver(data)


def cache_of(store: RedisSessionStore) -> SessionCache:
    assert store.cache is not None
    return store.cache


async def close(stores: list[RedisStores]) -> None:
    for redis in stores:
        await redis.sessions.aclose()
        await redis.bus.aclose()
        await redis.connection.aclose()


@asynccontextmanager
async def two_workers(**options: Any) -> AsyncIterator[tuple[Any, Any, RedisStores]]:
    """Two workers' apps on one Redis and prefix, and B's stores."""
    url, prefix = fresh_redis_url(), f"removed-{uuid.uuid4().hex}:"
    stores, apps = [], []
    for _ in range(2):
        redis = RedisStores.from_url(url, prefix=prefix, **options)
        server = Server("removed", state_keys=[KEY], redis=redis)

        @server.tool
        def add(a: int, b: int) -> int:
            return a + b

        stores.append(redis)
        apps.append(server.asgi_app())
    try:
        yield apps[0], apps[1], stores[1]
    finally:
        for app in apps:
            await app.shutdown()
        await close(stores)


async def cached_on(app: Any, store: RedisSessionStore, session: dict[str, str]) -> None:
    """The session is live on the worker of `app` and answered from its memory."""
    assert (await post(app, session, rpc(1, "ping")))[0] == 200
    await store.ready()
    assert (await post(app, session, rpc(2, "ping")))[0] == 200
    assert session["mcp-session-id"] in cache_of(store).entries


async def delete(app: Any, session: dict[str, str]) -> int:
    exchange = Exchange(app, "DELETE", session)
    status, _ = await exchange.start()
    await exchange.body()
    return status


def test_after_a_delete_answered_no_worker_answers_the_session() -> None:
    """B gets the news only after the DELETE: it must not answer the session from its
    copy then (the old code did, with a 200, until the news came)."""

    async def scenario() -> None:
        async with two_workers() as (a, b, b_stores):
            session = await initialize(a)
            await cached_on(b, b_stores.sessions, session)
            gate = Gate(cache_of(b_stores.sessions), session["mcp-session-id"])
            assert await asyncio.wait_for(delete(a, session), WAIT) == 200
            assert gate.reached.is_set()  # the news is held: B has not seen it
            status, _, body = await post(b, session, rpc(3, "ping"))
            assert status == 404, body
            gate.open()
            assert (await post(b, session, rpc(4, "ping")))[0] == 404
            assert (await post(a, session, rpc(5, "ping")))[0] == 404

    run(scenario())


def test_a_delete_answers_once_the_other_worker_acknowledged_it() -> None:
    """With a long staleness bound, the DELETE waits for B's acknowledgement: not
    answered while B's news is held, answered once it arrives, well before the bound
    would have ended the wait. (A has been subscribed for the bound: it has heard every
    heartbeat that may vouch for a copy, and so knows whom to wait for.)"""

    async def scenario() -> None:
        async with two_workers(session_stale_seconds=BOUND) as (a, b, b_stores):
            session = await initialize(a)
            await cached_on(b, b_stores.sessions, session)
            await asyncio.sleep(BOUND)  # A's subscription began at its initialize
            gate = Gate(cache_of(b_stores.sessions), session["mcp-session-id"])
            started = time.monotonic()
            deleting = asyncio.ensure_future(delete(a, session))
            await asyncio.wait_for(gate.reached.wait(), WAIT)
            await asyncio.sleep(0.5)  # (a DELETE that does not wait answers meanwhile)
            assert not deleting.done()
            assert (await post(b, session, rpc(3, "ping")))[0] == 200  # from B's copy still
            gate.open()
            assert await asyncio.wait_for(deleting, WAIT) == 200
            assert time.monotonic() - started < BOUND - 1  # ended by the acknowledgement
            assert (await post(b, session, rpc(4, "ping")))[0] == 404

    run(scenario())


def test_a_session_evicted_by_a_quota_is_answered_by_no_worker_after_the_create() -> None:
    url, prefix = fresh_redis_url(), f"removed-{uuid.uuid4().hex}:"
    a, b = (RedisStores.from_url(url, prefix=prefix) for _ in range(2))

    async def scenario() -> None:
        try:
            await a.sessions.create(SessionState(id="old", version="2025-11-25"), client="c")
            await b.sessions.ready()
            assert await b.sessions.load("old") is not None
            assert "old" in cache_of(b.sessions).entries
            gate = Gate(cache_of(b.sessions), "old")
            new = SessionState(id="new", version="2025-11-25")
            await asyncio.wait_for(a.sessions.create(new, client="c", quota=1), WAIT)
            assert gate.reached.is_set()  # evicted, and B has not seen the news
            assert await b.sessions.load("old") is None
            assert await b.sessions.load("new") is not None
            gate.open()
        finally:
            await close([a, b])

    run(scenario())


def test_what_a_delete_costs() -> None:
    """The deleting worker's removal: one pipeline of two scripts (the record, the
    index), as before; and one acknowledgement published by each other worker that
    holds a cache (B), off its request path. Nothing else: A found the session in its
    own cache, and publishes no acknowledgement of its own removal."""

    async def scenario() -> list[str]:
        async with two_workers() as (a, b, b_stores):
            session = await initialize(a)
            await cached_on(b, b_stores.sessions, session)
            monitor = Monitor()
            assert await asyncio.wait_for(delete(a, session), WAIT) == 200
            await asyncio.sleep(0.2)  # anything sent after the answer
            return [c for c in monitor.stop() if not heartbeat(c)]

    commands = run(scenario())
    scripts = [c for c in commands if '"EVALSHA"' in c]
    acks = [c for c in commands if '"PUBLISH"' in c and '"a ' in c]
    assert len(scripts) == 2, commands
    assert len(acks) == 1, commands
    assert len(commands) == 3, commands


def test_a_worker_that_just_subscribed_waits_out_the_bound() -> None:
    """A worker subscribed for less than the bound may have missed the heartbeat that
    lets another worker trust its copy: it cannot know whom to wait for, so its DELETE
    waits out the bound. (Had it answered at once, B, whose heartbeat before the
    subscription vouches for its copy for two seconds, would still answer it.)"""
    bound = 2.0  # B's heartbeat every half second: A, just subscribed, has not heard it
    url, prefix = fresh_redis_url(), f"removed-{uuid.uuid4().hex}:"
    a, b = (RedisStores.from_url(url, prefix=prefix, session_stale_seconds=bound) for _ in "ab")

    async def scenario() -> None:
        try:
            await b.sessions.create(SessionState(id="s", version="2025-11-25"))
            await b.sessions.ready()
            assert await b.sessions.load("s") is not None
            gate = Gate(cache_of(b.sessions), "s")
            await a.bus.ready()  # subscribed just now
            assert await asyncio.wait_for(a.sessions.delete("s"), WAIT)
            assert gate.reached.is_set()
            assert await b.sessions.load("s") is None
            gate.open()
        finally:
            await close([a, b])

    run(scenario())


def test_deletes_in_a_row_without_a_hook() -> None:
    """No hook: the other worker reads right after each delete returns. Before the fix
    its news had not been processed yet every time (the reply reaches the deleting
    worker before the subscription delivers), and B answered all of them."""
    url, prefix = fresh_redis_url(), f"removed-{uuid.uuid4().hex}:"
    a, b = (RedisStores.from_url(url, prefix=prefix) for _ in "ab")

    async def scenario() -> list[str]:
        try:
            await a.sessions.ready()
            await b.sessions.ready()
            await asyncio.sleep(1.2)  # subscribed for the bound: acknowledgements end the wait
            answered = []
            for n in range(50):
                session_id = f"s{n}"
                await a.sessions.create(SessionState(id=session_id, version="2025-11-25"))
                assert await b.sessions.load(session_id) is not None
                assert await a.sessions.delete(session_id)
                if await b.sessions.load(session_id) is not None:
                    answered.append(session_id)
            return answered
        finally:
            await close([a, b])

    assert run(scenario()) == []
