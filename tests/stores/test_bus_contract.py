"""The contract every `Bus` keeps (mcpgen.stores).

`IMPLEMENTATIONS` lists factories; a shared bus (e.g. Redis pub/sub) appends its own
and passes the same tests. Delivery may be asynchronous: the tests wait for what they
expect (and, to show that something did not arrive, for a later marker event).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import msgspec
import pytest

from mcpgen.stores import (
    Bus,
    BusEvent,
    ChangeEvent,
    InMemoryBus,
    ReplyEvent,
    TaskEvent,
)
from mcpgen.stores.redis import Connection, RedisBus
from tests.stores.redis_server import redis_url


def _redis() -> Connection:
    """A connection to the test redis-server under a prefix of its own (isolation)."""
    return Connection(redis_url(), prefix=f"test-{uuid.uuid4().hex}:")


def _redis_bus() -> Bus:
    return RedisBus(_redis())


IMPLEMENTATIONS: list[object] = [
    InMemoryBus,
    pytest.param(_redis_bus, marks=pytest.mark.needs_redis),
]

EVENTS: list[BusEvent] = [
    ChangeEvent("tools"),
    ChangeEvent("resource", "file:///a/b.txt"),
    TaskEvent("t1", "alice", {"taskId": "t1", "status": "completed", "result": {"n": [1, 2]}}),
    TaskEvent("t2", None, {"taskId": "t2", "status": "working"}),
    ReplyEvent("session-1", b'{"jsonrpc":"2.0","id":3,"result":{}}'),
]
MARK = ChangeEvent("prompts", "marker")


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda f: f.__name__)
def bus(request: pytest.FixtureRequest) -> Bus:
    factory: Callable[[], Bus] = request.param
    return factory()


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coro, 10))


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.001)


def test_every_subscriber_gets_every_kind_of_event_intact(bus: Bus) -> None:
    first: list[BusEvent] = []
    second: list[BusEvent] = []
    bus.subscribe(first.append)
    bus.subscribe(second.append)

    async def body() -> None:
        for event in EVENTS:
            bus.publish(event)
        await until(lambda: len(first) == len(second) == len(EVENTS))
        assert first == EVENTS and second == EVENTS
        assert [type(e) for e in first] == [type(e) for e in EVENTS]

    run(body())


def test_one_publishers_events_arrive_in_publish_order(bus: Bus) -> None:
    got: list[BusEvent] = []
    bus.subscribe(got.append)
    sent = [ChangeEvent("resource", f"file:///{i}") for i in range(200)]

    async def body() -> None:
        for event in sent:
            bus.publish(event)
        await until(lambda: len(got) == len(sent))
        assert got == sent

    run(body())


def test_a_subscriber_gets_only_what_is_published_after_it_subscribed(bus: Bus) -> None:
    early: list[BusEvent] = []
    late: list[BusEvent] = []
    bus.subscribe(early.append)

    async def body() -> None:
        bus.publish(EVENTS[0])
        await until(lambda: len(early) == 1)
        bus.subscribe(late.append)
        bus.publish(MARK)
        await until(lambda: len(late) == 1)
        assert late == [MARK] and early == [EVENTS[0], MARK]

    run(body())


def test_unsubscribe_stops_delivery_and_may_be_called_twice(bus: Bus) -> None:
    gone: list[BusEvent] = []
    staying: list[BusEvent] = []
    unsubscribe = bus.subscribe(gone.append)
    bus.subscribe(staying.append)

    async def body() -> None:
        bus.publish(EVENTS[0])
        await until(lambda: len(gone) == len(staying) == 1)
        unsubscribe()
        unsubscribe()
        bus.publish(EVENTS[1])
        bus.publish(MARK)
        await until(lambda: staying[-1] == MARK)
        assert gone == [EVENTS[0]]
        assert staying == [EVENTS[0], EVENTS[1], MARK]

    run(body())


def test_events_published_by_a_callback_follow_the_one_being_delivered(bus: Bus) -> None:
    """A subscriber that reacts to an event by publishing (the core does, for task
    cancellations) must not make others see the reaction before its cause."""
    seen: dict[str, list[BusEvent]] = {"a": [], "b": []}

    def reacting(event: BusEvent) -> None:
        seen["a"].append(event)
        if event == EVENTS[0]:
            bus.publish(EVENTS[1])

    bus.subscribe(reacting)
    bus.subscribe(seen["b"].append)

    async def body() -> None:
        bus.publish(EVENTS[0])
        bus.publish(MARK)
        await until(lambda: len(seen["a"]) == len(seen["b"]) == 3)
        assert seen["b"][0] == EVENTS[0]
        assert seen["a"] == seen["b"]
        assert seen["b"].index(EVENTS[1]) > 0

    run(body())


def test_events_survive_msgspec_encoding_as_the_tagged_union() -> None:
    """What a shared bus does with an event: encode it, decode it elsewhere."""
    for codec in (msgspec.json, msgspec.msgpack):
        decoded = [codec.decode(codec.encode(e), type=BusEvent) for e in EVENTS]
        assert decoded == EVENTS
        assert [type(e) for e in decoded] == [type(e) for e in EVENTS]
