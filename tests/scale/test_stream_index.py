"""What a change costs Redis when legacy sessions listen on GET streams across workers.

Every worker holding a session receives every bus event and makes the session's frame
of it. Only the worker that streams the session must hand the frame in; the others
skip it when the event store's index names a live worker streaming the log since
before the event (`transports/_standalone`, `RedisEventStore.hand_in`). So the Redis
work of a change grows with the sessions that listen, once, not with workers x
sessions, and the top-level commands do not grow with the sessions at all."""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid

import httpx
import pytest
import redis.asyncio as aioredis

from mcpgen.stores.redis import Connection, RedisEventStore
from tests.scale.harness import workers
from tests.scale.measure import Monitor, heartbeat
from tests.scale.test_legacy_stream import Reader, get_stream, settle
from tests.scale.test_two_workers import frame, open_session
from tests.stores.redis_server import redis_url
from tests.stores.redis_server import server as redis_server

pytestmark = pytest.mark.needs_redis

SESSIONS = 16


class _FullMonitor(Monitor):
    """MONITOR, keeping the commands Lua scripts run as well (their lines say `lua]`)."""

    def all_lines(self) -> list[str]:
        super().stop()
        return [line for line in self.lines if '"' in line]


@pytest.mark.slow
def test_a_change_costs_one_delivery_per_listening_session_not_one_per_worker() -> None:
    """16 sessions live on both workers, each listening on a GET stream on one of them
    (8 and 8): a change is handed in 16 times in all (one append per session, by the
    worker holding its stream), in one script per worker, and every stream hears it
    once. Before the index, each worker ran one script per session: 32 deliveries and
    32 top-level commands."""
    with workers() as (urls, _), httpx.Client(timeout=10) as sync_http:
        a, b = urls
        sessions = []
        for i in range(SESSIONS):
            session = open_session(sync_http, a, f"user{i}")  # live on A
            ping = sync_http.post(b, content=frame(1, "ping"), headers=session)
            assert ping.status_code == 200, ping.text  # and on B
            sessions.append(session)

        async def scenario() -> tuple[list[Reader], list[str]]:
            async with httpx.AsyncClient(timeout=10) as http, contextlib.AsyncExitStack() as st:
                readers = [
                    await st.enter_async_context(get_stream(http, (a, b)[i % 2], session))
                    for i, session in enumerate(sessions)
                ]
                await asyncio.sleep(0.3)
                monitor = None
                for rid in (8, 9):  # the first change loads the scripts: count the second
                    if rid == 9:
                        monitor = _FullMonitor()
                    call = frame(rid, "tools/call", {"name": "bump", "arguments": {}})
                    response = await http.post(a, content=call, headers=sessions[0])
                    assert response.status_code == 200, response.text
                    for reader in readers:
                        await settle(reader, rid - 7)
                assert monitor is not None
                return readers, monitor.all_lines()

        readers, lines = asyncio.run(asyncio.wait_for(scenario(), 120))
        for reader in readers:
            assert len(reader.changes()) == 2, reader.events
        top = [ln for ln in lines if " lua] " not in ln and not heartbeat(ln)]
        scripted = [ln for ln in lines if " lua] " in ln]
        deliveries = [ln for ln in scripted if re.search(r'"ZSCORE" "[^"]*e-keys:', ln)]
        appends = [ln for ln in scripted if '"RPUSH"' in ln]
        assert len(appends) == SESSIONS  # each session's log keeps the change once
        assert len(deliveries) == SESSIONS, len(deliveries)  # handed in once per session
        # The publish, the two workers' hand-ins: a handful, whatever the sessions.
        assert len(top) <= 6, [ln.split('"')[1:4] for ln in top]


def test_hand_in_skips_only_what_a_live_worker_streams_since_before_the_event() -> None:
    """The index's rule on the store alone: a worker's registration (in its claim) makes
    the others skip the events published after it, only while that worker is subscribed
    to the bus, and never the registering worker's own frames."""
    prefix = f"test-{uuid.uuid4().hex}:"
    store = RedisEventStore(Connection(redis_url(), prefix=prefix))
    log = "session/get"

    async def main() -> None:
        client = store.connection.client
        await client.set(prefix + "bus-seq", 5)  # five events published so far
        listener = aioredis.Redis(port=redis_server().port)
        pubsub = listener.pubsub()
        await pubsub.subscribe(prefix + "w:x")  # worker x is alive
        assert await store.claim(log, worker="x") == []  # x streams the log from event 5
        handed = await store.hand_in(
            [
                (log, "e5", b"five", False, 5),  # published before x began: kept
                (log, "e6", b"six", False, 6),  # after: x hands it in, y skips it
            ],
            worker="y",
        )
        assert handed[0][0] is not None and handed[1] == (None, False)
        own = await store.hand_in([(log, "e6", b"six", False, 6)], worker="x")
        assert own[0][0] is not None  # x without a stream (yet) keeps its own
        await store.release(log, "y")  # not y's to release
        assert (await store.hand_in([(log, "e7", b"7", False, 7)], worker="y"))[0][0] is None
        await pubsub.unsubscribe()  # x is gone (killed): y keeps the events again
        await pubsub.aclose()  # type: ignore[no-untyped-call]
        await listener.aclose()
        assert (await store.hand_in([(log, "e8", b"8", False, 8)], worker="y"))[0][0]
        assert not await client.hexists(prefix + "e-open", log)  # (forgotten on the way)
        again = await store.claim(log, worker="x")  # x streams again: what nobody had
        assert [f for _, f in again or []] == [b"five", b"six", b"8"]
        assert await client.hexists(prefix + "e-open", log)
        await store.release(log, "x")
        assert not await client.hexists(prefix + "e-open", log)
        await client.aclose()

    asyncio.run(main())


def test_the_bus_numbers_its_events_in_publish_order() -> None:
    """Every worker sees the same sequence number for an event (the index compares it
    with a registration's)."""
    from mcpgen.stores import ChangeEvent
    from mcpgen.stores.redis import RedisBus

    prefix = f"test-{uuid.uuid4().hex}:"
    buses = [RedisBus(Connection(redis_url(), prefix=prefix)) for _ in range(2)]

    async def main() -> list[list[int]]:
        seen: list[list[int]] = [[], []]
        for i, bus in enumerate(buses):
            bus.subscribe(lambda _e, i=i, bus=bus: seen[i].append(bus.sequence))
            await bus.ready()
        for n in range(3):
            buses[n % 2].publish(ChangeEvent("tools"))
        for _ in range(200):
            if all(len(s) == 3 for s in seen):
                break
            await asyncio.sleep(0.01)
        for bus in buses:
            await bus.aclose()
        return seen

    seen = asyncio.run(main())
    assert seen[0] == seen[1] == [1, 2, 3]
