"""The `SessionStore` contract: every implementation passes these tests.

A shared implementation (Redis, for several workers) appends its factory to
`IMPLEMENTATIONS`; a factory gets the clock, idle timeout and bound to honour.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import msgspec
import pytest

from mcpgen.stores import InMemorySessionStore, SessionState, SessionStore
from mcpgen.stores.redis import Connection, RedisBus, RedisSessionStore
from tests.stores.redis_server import redis_url

T = TypeVar("T")
Clock = Callable[[], float]
Factory = Callable[[Clock, float, int], SessionStore]

_WARM: list[RedisSessionStore] = []  # cached stores whose first heartbeat `run` awaits


def _redis() -> Connection:
    """A connection to the test redis-server under a prefix of its own (isolation)."""
    return Connection(redis_url(), prefix=f"test-{uuid.uuid4().hex}:")


def _cached(clock: Clock, idle: float, most: int) -> RedisSessionStore:
    """A worker's store with its cache of records (kept coherent over the bus)."""
    connection = _redis()
    store = RedisSessionStore(
        connection, idle_timeout=idle, max_sessions=most, clock=clock, bus=RedisBus(connection)
    )
    _WARM.append(store)
    return store


IMPLEMENTATIONS: list[object] = [
    lambda clock, idle, most: InMemorySessionStore(
        idle_timeout=idle, max_sessions=most, clock=clock
    ),
    pytest.param(
        lambda clock, idle, most: RedisSessionStore(
            _redis(), idle_timeout=idle, max_sessions=most, clock=clock
        ),
        marks=pytest.mark.needs_redis,
    ),
    pytest.param(_cached, marks=pytest.mark.needs_redis),
]
NAMES = ["InMemorySessionStore", "RedisSessionStore", "RedisSessionStore+cache"]


IDLE = 10.0
MOST = 3


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=IMPLEMENTATIONS, ids=NAMES)
def make(request: pytest.FixtureRequest) -> Callable[[], tuple[SessionStore, FakeClock]]:
    factory: Factory = request.param

    def build() -> tuple[SessionStore, FakeClock]:
        clock = FakeClock()
        return factory(clock, IDLE, MOST), clock

    return build


def run(coro: Coroutine[Any, Any, T]) -> T:
    async def main() -> T:
        while _WARM:  # so that the scenario runs against the cache, not around it
            await _WARM.pop().ready()
        return await coro

    return asyncio.run(main())


def state(session_id: str, **changes: Any) -> SessionState:
    fields: dict[str, Any] = {
        "version": "2025-11-25",
        "client_capabilities": {"elicitation": {"form": {}}, "roots": {"listChanged": True}},
        "client_info": {"name": "c", "version": "1"},
    }
    return SessionState(id=session_id, **{**fields, **changes})


def test_create_load_save_delete(make: Callable[[], tuple[SessionStore, FakeClock]]) -> None:
    store, _ = make()

    async def scenario() -> None:
        assert await store.load("a") is None
        await store.create(state("a", principal="alice"))
        loaded = await store.load("a")
        assert loaded == state("a", principal="alice")
        changed = state(
            "a", principal="alice", initialized=True, log_rank=4, subscriptions=["file:///x"]
        )
        await store.save(changed)
        assert await store.load("a") == changed
        assert await store.delete("a") is True
        assert await store.load("a") is None
        assert await store.delete("a") is False

    run(scenario())


def test_save_of_an_unknown_id_is_ignored(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, _ = make()

    async def scenario() -> None:
        await store.save(state("ghost", initialized=True))
        assert await store.load("ghost") is None

    run(scenario())


def test_a_loaded_state_is_a_copy(make: Callable[[], tuple[SessionStore, FakeClock]]) -> None:
    """Changing what load returned changes nothing until it is saved (as with a shared
    store, where a load is a network read)."""
    store, _ = make()

    async def scenario() -> None:
        await store.create(state("a"))
        loaded = await store.load("a")
        assert loaded is not None
        loaded.subscriptions.append("file:///y")
        loaded.initialized = True
        assert await store.load("a") == state("a")

    run(scenario())


def test_idle_sessions_expire_and_load_restarts_the_timeout(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, clock = make()

    async def scenario() -> None:
        await store.create(state("kept"))
        await store.create(state("idle"))
        for _ in range(3):  # used every 6 s: never idle for 10
            clock.now += 6
            assert await store.load("kept") is not None
        assert await store.load("idle") is None  # 18 s unused
        clock.now += IDLE + 1
        assert await store.load("kept") is None
        await store.save(state("kept", initialized=True))  # an expired one is not revived
        assert await store.load("kept") is None

    run(scenario())


def test_save_counts_as_use(make: Callable[[], tuple[SessionStore, FakeClock]]) -> None:
    store, clock = make()

    async def scenario() -> None:
        await store.create(state("a"))
        clock.now += 6
        await store.save(state("a", log_rank=2))
        clock.now += 6
        assert await store.load("a") == state("a", log_rank=2)

    run(scenario())


def test_past_the_bound_the_least_recently_used_goes(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, clock = make()

    async def scenario() -> None:
        for name in ("s0", "s1", "s2"):
            clock.now += 1
            await store.create(state(name))
        clock.now += 1
        assert await store.load("s0") is not None  # s0 used: s1 is now the oldest
        await store.create(state("s3"))
        assert await store.load("s1") is None
        for name in ("s0", "s2", "s3"):
            assert await store.load(name) == state(name)

    run(scenario())


def test_states_round_trip_through_msgspec() -> None:
    full = state(
        "a",
        initialized=True,
        log_rank=6,
        subscriptions=["file:///a", "file:///b"],
        principal="bob",
    )
    for codec in (msgspec.json, msgspec.msgpack):
        assert codec.decode(codec.encode(full), type=SessionState) == full
    assert msgspec.json.decode(msgspec.json.encode(state("b")), type=SessionState) == state("b")


def test_states_keep_their_fields_through_the_store(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, _ = make()
    full = state(
        "a",
        initialized=True,
        log_rank=6,
        subscriptions=["file:///a", "file:///b"],
        principal="bob",
    )

    async def scenario() -> None:
        await store.create(full)
        assert await store.load("a") == full
        await store.create(state("none", client_info=None))
        assert (await store.load("none")) == state("none", client_info=None)

    run(scenario())


# -- quotas: one client cannot push out another's sessions ------------------------------------
def test_a_client_past_its_quota_gives_up_its_own_least_recently_used(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, clock = make()

    async def scenario() -> None:
        clock.now += 1
        await store.create(state("bob1"), client="p:bob", quota=2)
        for name in ("x1", "x2"):
            clock.now += 1
            await store.create(state(name), client="a:10.0.0.9", quota=2)
        clock.now += 1
        assert await store.load("x1") is not None  # x1 used: x2 is the attacker's oldest
        clock.now += 1
        await store.create(state("x3"), client="a:10.0.0.9", quota=2)
        assert await store.load("x2") is None
        assert await store.load("x1") is not None
        assert await store.load("x3") is not None
        assert await store.load("bob1") == state("bob1")  # older than all: still there

    run(scenario())


def test_a_full_store_evicts_the_creators_own_sessions_first(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    """MOST is 3: a flood from one client leaves an idle victim's session alone while
    the flooder holds any of its own; a client holding none makes room as before."""
    store, clock = make()

    async def scenario() -> None:
        await store.create(state("victim"), client="p:alice", quota=100)
        for i in range(20):
            clock.now += 0.1
            await store.create(state(f"flood{i}"), client="a:192.0.2.1", quota=100)
        assert await store.load("victim") == state("victim")
        assert await store.load("flood19") is not None
        assert await store.load("flood0") is None
        # sessions without a client, and new clients, still make room by the global rule
        clock.now += 1
        await store.create(state("carol"), client="p:carol", quota=100)
        assert await store.load("carol") is not None

    run(scenario())


def test_a_deleted_or_expired_session_frees_its_clients_quota(
    make: Callable[[], tuple[SessionStore, FakeClock]],
) -> None:
    store, clock = make()

    async def scenario() -> None:
        await store.create(state("a1"), client="p:alice", quota=2)
        await store.create(state("a2"), client="p:alice", quota=2)
        assert await store.delete("a1") is True
        await store.create(state("a3"), client="p:alice", quota=2)
        assert await store.load("a2") is not None  # a1's place was free: nothing evicted
        clock.now += IDLE + 1  # both idle out
        await store.create(state("a4"), client="p:alice", quota=2)
        await store.create(state("a5"), client="p:alice", quota=2)
        assert await store.load("a4") is not None
        assert await store.load("a5") is not None

    run(scenario())
