"""The `EventStore` contract: every implementation passes these tests.

A shared implementation appends its factory to `IMPLEMENTATIONS`; a factory gets the
clock, the per-stream and total bounds, and the ttl after which an idle stream is
forgotten.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from mcpgen.stores import EventStore, InMemoryEventStore, Replay
from mcpgen.stores.redis import Connection, RedisEventStore
from tests.stores.redis_server import redis_url

T = TypeVar("T")
Clock = Callable[[], float]
Factory = Callable[[Clock, int, int, float], EventStore]

IMPLEMENTATIONS: list[object] = [
    lambda clock, per_stream, total, ttl: InMemoryEventStore(
        max_per_stream=per_stream, max_events=total, ttl=ttl, clock=clock
    ),
    pytest.param(
        lambda clock, per_stream, total, ttl: RedisEventStore(
            _redis(), max_per_stream=per_stream, max_events=total, ttl=ttl, clock=clock
        ),
        marks=pytest.mark.needs_redis,
    ),
]
NAMES = ["InMemoryEventStore", "RedisEventStore"]


def _redis() -> Connection:
    """A connection to the test redis-server under a prefix of its own (isolation)."""
    return Connection(redis_url(), prefix=f"test-{uuid.uuid4().hex}:")


PER_STREAM = 5
TOTAL = 8
TTL = 60.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


Make = Callable[[], tuple[EventStore, FakeClock]]


@pytest.fixture(params=IMPLEMENTATIONS, ids=NAMES)
def make(request: pytest.FixtureRequest) -> Make:
    factory: Factory = request.param

    def build() -> tuple[EventStore, FakeClock]:
        clock = FakeClock()
        return factory(clock, PER_STREAM, TOTAL, TTL), clock

    return build


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def frames(replay: Replay | None) -> list[bytes]:
    assert replay is not None
    return [frame for _, frame in replay.events]


def test_replay_returns_the_events_after_an_id_in_order(make: Make) -> None:
    store, _ = make()

    async def scenario() -> None:
        ids = [await store.append("s", b"e%d" % i) for i in range(4)]
        assert len(set(ids)) == 4
        for eid in ids:  # an SSE id line: visible ASCII, no newline
            assert re.fullmatch(r"[\x21-\x7e]+", eid)
        replay = await store.replay(ids[1])
        assert replay is not None and replay.stream_id == "s"
        assert replay.events == [(ids[2], b"e2"), (ids[3], b"e3")]
        assert frames(await store.replay(ids[3])) == []  # nothing missed
        later = await store.append("s", b"e4")
        assert frames(await store.replay(ids[3])) == [b"e4"]
        whole = [(ids[1], b"e1"), *replay.events, (later, b"e4")]
        assert await store.replay(ids[0]) == Replay("s", whole)

    run(scenario())


def test_empty_frames_are_events_too(make: Make) -> None:
    """A priming event (an id with no data) is kept: resuming from it replays what
    followed it."""
    store, _ = make()

    async def scenario() -> None:
        priming = await store.append("s", b"")
        await store.append("s", b"one")
        assert frames(await store.replay(priming)) == [b"one"]

    run(scenario())


def test_unknown_and_malformed_ids(make: Make) -> None:
    store, _ = make()

    async def scenario() -> None:
        eid = await store.append("s", b"x")
        for bad in ("", "nope", "0", "1.1", eid + "0", eid + ".", "." + eid, eid + "x"):
            assert await store.replay(bad) is None, bad

    run(scenario())


# Digits to `str.isdigit` that are no decimal number (a Last-Event-ID header is read as
# latin-1, so a client can send the first two as single bytes).
NOT_DECIMAL = ["\u00b2", "\u00b9", "\u0663", "1\u00b2", "\uff11"]


@pytest.mark.parametrize("digits", NOT_DECIMAL)
def test_an_id_whose_number_is_no_ascii_decimal_is_unknown(make: Make, digits: str) -> None:
    """The stream is real, its number is not: refused (None), never an error."""
    store, _ = make()

    async def scenario() -> None:
        eid = await store.append("s", b"x")
        key = eid.rpartition(".")[0]
        assert await store.replay(f"{key}.{digits}") is None
        claim = getattr(store, "claim", None)
        if claim is not None:  # the shared log of several workers' standalone streams
            assert await claim("s", f"{key}.{digits}") is None

    run(scenario())


def test_ids_are_unique_across_streams_and_replay_only_their_stream(make: Make) -> None:
    store, _ = make()

    async def scenario() -> None:
        a = [await store.append("a", b"a%d" % i) for i in range(3)]
        b = [await store.append("b", b"b%d" % i) for i in range(3)]
        assert not set(a) & set(b)
        replay_a = await store.replay(a[0])
        replay_b = await store.replay(b[0])
        assert replay_a is not None and replay_a.stream_id == "a"
        assert frames(replay_a) == [b"a1", b"a2"]
        assert replay_b is not None and replay_b.stream_id == "b"
        assert frames(replay_b) == [b"b1", b"b2"]

    run(scenario())


def test_a_stream_keeps_its_newest_events(make: Make) -> None:
    store, _ = make()

    async def scenario() -> None:
        ids = [await store.append("s", b"e%d" % i) for i in range(PER_STREAM + 2)]
        # e0 and e1 went: resuming after e1 misses nothing, after e0 would miss e1
        assert frames(await store.replay(ids[1])) == [b"e%d" % i for i in range(2, PER_STREAM + 2)]
        assert await store.replay(ids[0]) is None

    run(scenario())


def test_the_store_keeps_its_newest_events_in_all(make: Make) -> None:
    store, clock = make()

    async def scenario() -> None:
        old = [await store.append("old", b"o%d" % i) for i in range(4)]
        clock.now += 1
        new = [await store.append("new", b"n%d" % i) for i in range(PER_STREAM)]
        # 9 events against a bound of 8: the oldest of the least recently used stream
        # went; resuming after it still misses nothing
        assert frames(await store.replay(old[0])) == [b"o1", b"o2", b"o3"]
        assert frames(await store.replay(new[0])) == [b"n%d" % i for i in range(1, PER_STREAM)]
        clock.now += 1
        for i in range(4):  # 12 events: "old" goes altogether, then "new"'s oldest
            await store.append("third", b"t%d" % i)
        for eid in old:
            assert await store.replay(eid) is None
        assert frames(await store.replay(new[0])) == [b"n%d" % i for i in range(1, PER_STREAM)]
        await store.append("third", b"t4")  # n1 goes: resuming after n0 would miss it
        assert await store.replay(new[0]) is None
        assert frames(await store.replay(new[1])) == [b"n%d" % i for i in range(2, PER_STREAM)]

    run(scenario())


def test_idle_streams_are_forgotten_after_the_ttl(make: Make) -> None:
    store, clock = make()

    async def scenario() -> None:
        quiet = await store.append("quiet", b"q")
        busy = await store.append("busy", b"b0")
        for i in range(1, 4):
            clock.now += TTL / 2
            await store.append("busy", b"b%d" % i)
        assert await store.replay(quiet) is None
        assert frames(await store.replay(busy)) == [b"b1", b"b2", b"b3"]
        clock.now += TTL + 1
        assert await store.replay(busy) is None
        again = await store.append("busy", b"fresh")  # a new stream under the old name
        assert again != busy and frames(await store.replay(again)) == []

    run(scenario())
