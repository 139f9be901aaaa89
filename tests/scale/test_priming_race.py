"""A legacy GET stream's priming event and a frame another worker hands in at the same
moment (`transports/_standalone`, docs/guide/scale-out.md "The order of a GET stream's
events").

Two workers of one server in this process, each its own `Server` with its own Redis
connection (two store clients on the test redis-server), driven in-process. The session
is live on both; its client opens a GET on A with nothing to replay. A change is
published just before A claims the session's log, and B, which holds the session
without a stream, hands its frame in just after the claim: the test holds B's hand-in
back until A's claim has run, and A's opening waits until it is in. This is the window
the race needs, made certain instead of rare.

When A gave its priming event an id in a second step after the claim, the frame took
the lower id and arrived after the priming event ([2, 1]); a client resuming from the
priming id missed it. Now the claim itself appends the priming event, so the frame
comes after it in the log as on the wire, and resuming from the priming id replays it.

Run with each worker's own `RedisEventStore`, and with one `InMemoryEventStore` shared
by the two apps of this process (there nothing could run between the two old steps
without this test's hook, but the store must give the same guarantee).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import pytest

from mcpgen import Server
from mcpgen.stores import InMemoryEventStore
from mcpgen.stores._events import Delivery
from mcpgen.stores.redis import Connection, RedisEventStore, RedisStores
from mcpgen.stores.redis._events import Handed
from tests.scale.harness import KEY
from tests.stores.redis_server import redis_url
from tests.transports.asgidriver import Exchange, initialize, post, rpc

pytestmark = pytest.mark.needs_redis

T = TypeVar("T")
LIST_CHANGED = "notifications/tools/list_changed"
WAIT = 10.0  # seconds: a bound, not a timing (each step waits for the one before)


class Race:
    """The interleaving: `publish` runs just before the armed claim; the hand-in that
    comes next (B's, A's courier is busy opening the stream) is held until the claim
    has run, and the claim does not return before that hand-in is in the log."""

    def __init__(self) -> None:
        self.publish: Callable[[], None] = lambda: None
        self.armed = False
        self.published = False
        self.held = asyncio.Event()  # B has the change and waits to hand it in
        self.claimed = asyncio.Event()  # A's claim has run
        self.handed = asyncio.Event()  # B's hand-in is in the log

    async def claim(self, claim: Callable[[], Awaitable[T]]) -> T:
        if not self.armed:
            return await claim()
        self.armed = False
        self.publish()
        self.published = True
        await asyncio.wait_for(self.held.wait(), WAIT)
        found = await claim()
        self.claimed.set()
        await asyncio.wait_for(self.handed.wait(), WAIT)
        return found

    async def hand_in(self, hand_in: Callable[[], Awaitable[T]]) -> T:
        if not self.published or self.held.is_set():
            return await hand_in()
        self.held.set()
        await asyncio.wait_for(self.claimed.wait(), WAIT)
        done = await hand_in()
        self.handed.set()
        return done


class RacedRedisEvents(RedisEventStore):
    def __init__(self, connection: Connection, race: Race) -> None:
        super().__init__(connection)
        self.race = race

    async def claim(
        self, stream_id: str, after: str | None = None, **options: Any
    ) -> list[tuple[str, bytes]] | None:
        return await self.race.claim(
            lambda: super(RacedRedisEvents, self).claim(stream_id, after, **options)
        )

    async def hand_in(
        self, items: Sequence[Handed], worker: str = ""
    ) -> list[tuple[str | None, bool]]:
        return await self.race.hand_in(lambda: super(RacedRedisEvents, self).hand_in(items, worker))


class RacedMemoryEvents(InMemoryEventStore):
    def __init__(self, race: Race) -> None:
        super().__init__()
        self.race = race

    async def claim(
        self, stream_id: str, after: str | None = None, **options: Any
    ) -> list[tuple[str, bytes]] | None:
        return await self.race.claim(
            lambda: super(RacedMemoryEvents, self).claim(stream_id, after, **options)
        )

    async def deliver_many(self, items: Sequence[Delivery]) -> list[tuple[str, bool]]:
        return await self.race.hand_in(lambda: super(RacedMemoryEvents, self).deliver_many(items))


def _number(event_id: str | None) -> int:
    assert event_id is not None
    return int(event_id.rpartition(".")[2])


async def _first_with_id(stream: Exchange) -> dict[str, str]:
    """The stream's first SSE block that carries an event id."""
    while True:
        block = await stream.block()
        assert block is not None, "the stream ended"
        if "id" in block:
            return block


@pytest.mark.parametrize("kind", ["redis", "memory"])
def test_a_frame_handed_in_by_another_worker_right_after_the_claim_follows_the_priming_event(
    kind: str,
) -> None:
    async def scenario() -> None:
        prefix = f"test-{uuid.uuid4().hex}:"
        race = Race()
        shared = RacedMemoryEvents(race)
        stores, servers, apps = [], [], []
        for _ in range(2):  # A, then B: a connection of its own each
            redis = RedisStores.from_url(redis_url(), prefix=prefix)
            events = RacedRedisEvents(redis.connection, race) if kind == "redis" else shared
            server = Server("race", state_keys=[KEY], redis=redis)
            stores.append(redis)
            servers.append(server)
            apps.append(server.asgi_app(events=events))
        a, b = apps
        try:
            session = await initialize(a)  # live on A
            status, _, _ = await post(b, session, rpc(1, "ping"))
            assert status == 200  # and on B
            race.publish = servers[0].notify_tools_changed  # published on A, just before
            race.armed = True
            get = {**session, "accept": "text/event-stream"}
            stream = Exchange(a, "GET", get)
            status, _ = await stream.start()
            assert status == 200
            priming = await _first_with_id(stream)
            assert priming.get("data", "") == ""  # nothing to replay: a priming event
            event_id, message = await asyncio.wait_for(stream.event(), WAIT)
            assert message["method"] == LIST_CHANGED
            # The order on the wire is the order of the ids.
            assert _number(priming["id"]) < _number(event_id), (priming["id"], event_id)
            await stream.disconnect()
            # Cut off right after the priming event: resuming from it, on the other
            # worker, replays the change.
            resumed = Exchange(b, "GET", {**get, "last-event-id": priming["id"]})
            status, _ = await resumed.start()
            assert status == 200
            replayed = await _first_with_id(resumed)
            assert replayed["id"] == event_id and LIST_CHANGED in replayed.get("data", ""), replayed
            await resumed.disconnect()
        finally:
            for app in apps:
                await app.shutdown()
            for redis in stores:
                await redis.sessions.aclose()
                await redis.bus.aclose()
                await redis.connection.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 60))
