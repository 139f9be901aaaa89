"""A legacy session's standalone (GET) stream across two workers on one Redis: the
session is live on both, both receive every bus event, and the client must still get
each session-level notification exactly once, on whichever worker holds its GET stream
now, with nothing lost while no stream was open and no stale copy from a worker that
held none (`transports/_standalone`)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from mcpgen.stores import InMemoryEventStore
from mcpgen.stores.redis import Connection, RedisEventStore
from tests.scale.harness import workers
from tests.scale.wire import (  # Reader and CHANGED stay importable from here
    CHANGED,  # noqa: F401
    Reader,  # noqa: F401
    frame,
    get_stream,
    open_session,
    settle,
)
from tests.stores.redis_server import redis_url

pytestmark = pytest.mark.needs_redis


@pytest.mark.slow
def test_each_change_reaches_the_get_stream_once_whichever_worker_holds_it() -> None:
    with workers() as (urls, _), httpx.Client(timeout=10) as sync_http:
        a, b = urls
        session = open_session(sync_http, a, "alice")  # live on A

        async def bump(http: httpx.AsyncClient, url: str, rid: int) -> None:
            call = frame(rid, "tools/call", {"name": "bump", "arguments": {}})
            response = await http.post(url, content=call, headers=session)
            assert response.status_code == 200, response.text

        async def scenario() -> None:
            async with httpx.AsyncClient(timeout=10) as http:
                # The GET stream on B; the change made on A: exactly once on B.
                async with get_stream(http, b, session) as on_b:
                    await bump(http, a, 1)
                    await settle(on_b, 1)
                    assert len(on_b.changes()) == 1, on_b.events
                    resume_from = on_b.last_id()
                # No stream open anywhere: a change made on B must wait, once.
                await bump(http, b, 2)
                await asyncio.sleep(0.3)
                # Reconnect to A after B's last event: only what B never carried.
                async with get_stream(http, a, session, resume_from) as on_a:
                    await settle(on_a, 1)
                    assert len(on_a.changes()) == 1, on_a.events
                    seen = on_a.changes() + on_b.changes()
                    assert len(set(seen)) == 2  # two events, two ids
                # A fresh stream on B (no Last-Event-ID): nothing left over anywhere.
                async with get_stream(http, b, session) as again:
                    await settle(again, 1)
                    assert again.changes() == [], again.events
                    await bump(http, a, 3)
                    await settle(again, 1)
                    assert len(again.changes()) == 1, again.events

        asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.slow
def test_a_reconnect_replays_what_the_lost_stream_did_not_deliver() -> None:
    """Changes made while the client was away, on either worker, are replayed after its
    Last-Event-ID by the other worker, in order and once."""
    with workers() as (urls, _), httpx.Client(timeout=10) as sync_http:
        a, b = urls
        session = open_session(sync_http, b, "bob")

        async def scenario() -> list[int]:
            async with httpx.AsyncClient(timeout=10) as http:
                async with get_stream(http, a, session) as first:
                    resume_from = first.last_id()  # the priming event
                for rid, url in enumerate([a, b, a], start=1):
                    call = frame(rid, "tools/call", {"name": "bump", "arguments": {}})
                    assert (await http.post(url, content=call, headers=session)).is_success
                await asyncio.sleep(0.3)
                async with get_stream(http, b, session, resume_from) as resumed:
                    await settle(resumed, 3)
                    ids = resumed.changes()
                    return [int(str(eid).rpartition(".")[2]) for eid in ids]

        numbers = asyncio.run(asyncio.wait_for(scenario(), 60))
        assert len(numbers) == 3 and numbers == sorted(set(numbers)), numbers


def _stores() -> list[Any]:
    prefix = f"test-{uuid.uuid4().hex}:"
    return [InMemoryEventStore(), RedisEventStore(Connection(redis_url(), prefix=prefix))]


@pytest.mark.parametrize("which", [0, 1], ids=["InMemoryEventStore", "RedisEventStore"])
def test_a_log_keeps_each_event_once_and_hands_it_to_one_claimer(which: int) -> None:
    store = _stores()[which]

    async def main() -> None:
        log = "session/get"
        if isinstance(store, RedisEventStore):  # a Redis that lost its scripts reloads them
            await store.connection.client.script_flush()
        first, claimed = (await store.deliver_many([(log, "e1", b"one", False)]))[0]
        assert not claimed  # handed in by a worker without a stream: waits
        again = await store.deliver_many([(log, "e1", b"one", True), (log, "e1", b"one", True)])
        assert again == [(first, True), (first, False)]  # kept once, claimed once
        two, three = await store.deliver_many(
            [(log, "e2", b"two", False), (log, "e3", b"3", False)]
        )
        assert await store.claim(log) == [(two[0], b"two"), (three[0], b"3")]
        assert await store.claim(log) == []  # nothing left unclaimed
        assert await store.deliver_many([(log, "e3", b"3", True)]) == [(three[0], False)]
        replayed = await store.claim(log, first)  # a Last-Event-ID of the log
        assert replayed == [(two[0], b"two"), (three[0], b"3")]
        assert await store.claim(log, "unknown.1") is None
        assert await store.claim("other/get") == []
        assert await store.claim("other/get", first) is None
        missed = await store.replay(first)  # an ordinary stream too
        assert missed is not None and missed.stream_id == log
        assert [frame for _, frame in missed.events] == [b"two", b"3"]

    asyncio.run(main())


@pytest.mark.parametrize("which", [0, 1], ids=["InMemoryEventStore", "RedisEventStore"])
def test_a_priming_claim_numbers_its_event_after_every_earlier_one_and_before_later_ones(
    which: int,
) -> None:
    """`claim(..., prime=True)` with nothing to return appends the priming event in the
    claim itself, claimed: what is handed in after gets a later id (and is claimable),
    and resuming from the priming id replays it. With something to return, nothing is
    appended; a Last-Event-ID the log cannot replay from appends nothing either."""
    store = _stores()[which]

    async def main() -> None:
        log = "session/get"
        opened = await store.claim(log, prime=True)
        assert opened is not None and [f for _, f in opened] == [b""]  # a new log: priming
        primed = opened[0][0]
        (late, claimed), *_ = await store.deliver_many([(log, "e1", b"one", True)])
        assert claimed and _n(primed) < _n(late)  # handed in after: later, and live
        assert await store.claim(log, primed) == [(late, b"one")]  # resumable from it
        (handed, _), *_ = await store.deliver_many([(log, "e2", b"two", False)])
        assert await store.claim(log, prime=True) == [(handed, b"two")]  # data: no priming
        again = await store.claim(log, handed, prime=True)  # nothing after it: priming
        assert again is not None and [(_n(eid), f) for eid, f in again] == [(_n(handed) + 1, b"")]
        assert await store.claim(log) == []  # the priming event was claimed with it
        assert await store.claim(log, "unknown.1", prime=True) is None
        missed = await store.replay(again[0][0])
        assert missed is not None and missed.events == []  # nothing appended since

    asyncio.run(main())


def _n(event_id: str) -> int:
    return int(event_id.rpartition(".")[2])
