"""The stores on a three-master Redis Cluster (real `redis-server` processes made with
`redis-cli --cluster create`): sessions, tasks, response groups and replay marks
spread over every master, while every store operation works (no CROSSSLOT anywhere:
each operation succeeds, and no node counted a CROSSSLOT error). Then a failover of a
master holding some sessions: those sessions are unavailable (a clean
`StoreUnavailableError`) until its replica takes over, within a bound; the sessions on
the other masters are served throughout."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from mcpgen.stores import SessionState, StoreUnavailableError, TaskState
from mcpgen.stores._events import Delivery
from mcpgen.stores._interfaces import TaskEvent
from mcpgen.stores._limits import Bucket
from mcpgen.stores.redis import (
    RedisRateLimitStore,
    RedisReplayCache,
    RedisResponseStore,
    RedisStores,
)
from tests.stores.redis_ha import ClusterLayout, command

# Real three-master layouts (with replicas, killed and promoted), 15 to 30 s a test:
# outside the quick tier, as the other HA legs.
pytestmark = [pytest.mark.needs_redis, pytest.mark.slow]
T = TypeVar("T")
BOUND = 20.0  # seconds: the test's limit for a failover (measured: see redis-ha.md)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 120))


def masters(layout: ClusterLayout) -> list[int]:
    """The ports of the live masters."""
    found = []
    for port in layout.ports:
        if layout.processes[port].poll() is None:
            role = command(port, "ROLE", timeout=2.0)
            if b"master" in role.split(b"\r\n")[2]:
                found.append(port)
    return found


def keys_on(port: int, pattern: str) -> list[str]:
    """The keys matching `pattern` on the node at `port` (one SCAN: the tests' data is
    small)."""
    raw = command(port, "SCAN", "0", "MATCH", pattern, "COUNT", "100000", timeout=2.0)
    lines = raw.decode(errors="replace").split("\r\n")
    return [line for line in lines[5::2] if line]


def errors_on(port: int) -> str:
    return command(port, "INFO", "errorstats", timeout=2.0).decode(errors="replace")


def task(task_id: str, status: str = "working") -> TaskState:
    ms = int(time.time() * 1000)
    return TaskState(
        id=task_id,
        principal="alice",
        status=status,  # type: ignore[arg-type]
        created_ms=ms,
        updated_ms=ms,
        ttl_ms=60_000,
        poll_ms=500,
        owner="w",
    )


async def every_store_operation(stores: RedisStores, n: int) -> None:
    """Each store's every operation, on `n` entities each (spread over the masters)."""
    sessions, tasks, events, bus = stores.sessions, stores.tasks, stores.events, stores.bus
    ids = [f"s{uuid.uuid4().hex}" for _ in range(n)]
    for i, sid in enumerate(ids):
        await sessions.create(SessionState(id=sid, version="2025-11-25"), client=f"a:{i % 5}")
    for sid in ids:
        state = await sessions.load(sid)
        assert state is not None and state.id == sid
        await sessions.save(SessionState(id=sid, version="2025-11-25", log_rank=2))
    for sid in ids[: n // 4]:
        assert await sessions.delete(sid)
        assert await sessions.load(sid) is None
    for sid in ids[n // 4 :]:
        loaded = await sessions.load(sid)
        assert loaded is not None and loaded.log_rank == 2

    for i in range(n):
        assert await tasks.create(task(f"t{i}"), client=f"p:{i % 4}", most=n)
    for i in range(n):
        got = await tasks.get(f"t{i}")
        assert got is not None and got.status == "working"
        if i % 2:
            await tasks.put(task(f"t{i}", status="completed"))
    for i in range(0, n, 3):
        await tasks.delete(f"t{i}")
        assert await tasks.get(f"t{i}") is None
    # a client's bound across tasks on different masters
    for i in range(3):
        assert await tasks.create(task(f"b{i}"), client="p:bounded", most=3)
    assert not await tasks.create(task("b3"), client="p:bounded", most=3)
    await tasks.put(task("b0", status="completed"))
    assert await tasks.create(task("b3"), client="p:bounded", most=3)
    await tasks.aclose()

    got: list[object] = []
    bus.subscribe(got.append)
    await bus.ready()
    first = await events.append(f"{ids[-1]}/r", b"one")
    await events.append(f"{ids[-1]}/r", b"two")
    replay = await events.replay(first)
    assert replay is not None and [f for _, f in replay.events] == [b"two"]
    items: list[Delivery] = [(f"{sid}", f"k{sid}", b"x", False) for sid in ids[-4:]]
    assert all(event_id for event_id, _ in await events.deliver_many(items))
    claimed = await events.claim(ids[-1], worker=bus.worker)
    assert claimed is not None
    handed = await events.hand_in([(ids[-1], "k2", b"y", False, 10**9)], worker="other")
    assert handed == [(None, False)]  # this worker streams it and still listens: skipped
    await events.release(ids[-1], bus.worker)
    bus.publish(TaskEvent("t1", None, {}))
    deadline = time.monotonic() + 10
    while not got and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert got, "the bus's own event came back"
    await bus.aclose()

    responses = RedisResponseStore(stores.connection)
    limits = RedisRateLimitStore(stores.connection)
    replays = RedisReplayCache(stores.connection)
    for i in range(n):
        await responses.put(f"g{i}", "k", b"v", 60_000)
        assert await responses.get(f"g{i}", "k") == b"v"
        await responses.invalidate(f"g{i}")
        assert await responses.get(f"g{i}", "k") is None
        buckets = [Bucket("g", 1000.0, 1000.0), Bucket(f"c:{i}", 10.0, 10.0)]
        assert await limits.take(buckets) == 0.0
        assert await replays.first_use(f"jti-{i}", 60.0)
        assert not await replays.first_use(f"jti-{i}", 60.0)


def test_the_stores_spread_over_every_master_and_no_operation_crosses_slots() -> None:
    layout = ClusterLayout()
    try:
        stores = RedisStores.from_url(layout.url)
        run(every_store_operation(stores, 60))
        ports = masters(layout)
        assert len(ports) == 3
        for port in ports:
            sessions = keys_on(port, "mcpgen:*session:*")
            tasks = keys_on(port, "mcpgen:*t:t*")
            groups = keys_on(port, "mcpgen:*rc:gen:*")
            replays = keys_on(port, "mcpgen:replay:*")
            size = int(command(port, "DBSIZE").strip()[1:])
            print(f"master {port}: {size} keys, {len(sessions)} sessions, {len(tasks)} tasks")
            assert sessions and tasks and groups and replays, port
            assert "CROSSSLOT" not in errors_on(port)
        for port in layout.ports:
            assert "CROSSSLOT" not in errors_on(port)
    finally:
        layout.close()


def test_a_failover_stops_only_the_sessions_of_the_failed_master() -> None:
    """`cluster-require-full-coverage no`: the other masters keep serving while one
    fails over (with the default, `yes`, the whole cluster refuses until the replica
    took over)."""
    layout = ClusterLayout(replicas=1, extra=("--cluster-require-full-coverage", "no"))
    try:
        stores = RedisStores.from_url(layout.url)

        async def main() -> float:
            sessions = stores.sessions
            ids = [f"s{uuid.uuid4().hex}" for _ in range(30)]
            for sid in ids:
                await sessions.create(SessionState(id=sid, version="2025-11-25"))
            where = {sid: layout.master_of(f"mcpgen:{{s:{sid}}}") for sid in ids}
            victim = where[ids[0]]
            hit = [sid for sid in ids if where[sid] == victim]
            spared = [sid for sid in ids if where[sid] != victim]
            assert hit and spared
            command(victim, "WAIT", "1", "5000", timeout=6.0)  # (replicated)
            killed = time.monotonic()
            layout.kill(victim)
            recovered = None
            for _ in range(2000):  # bounded: every round loads every session once
                assert time.monotonic() - killed < BOUND, "not served again in time"
                for sid in spared:  # the other masters: served throughout
                    assert await sessions.load(sid) is not None
                try:
                    for sid in hit:
                        assert await sessions.load(sid) is not None
                except StoreUnavailableError:
                    await asyncio.sleep(0.05)
                    continue
                recovered = time.monotonic() - killed
                break
            assert recovered is not None
            for sid in ids:  # nothing replicated is lost
                assert await sessions.load(sid) is not None
            return recovered

        took = run(main())
        print(f"sessions of the failed master served again after {took:.2f} s")
        assert took < BOUND
    finally:
        layout.close()


def test_a_failover_empties_the_session_caches_and_they_stay_coherent() -> None:
    """Two workers' session caches on a spread Cluster: the news of a session comes
    from its own master, and a heartbeat goes through every master. The master of a
    cached session (not the bus's) is killed: the worker stops answering it from its
    memory and empties its cache when the masters change; after the failover a change
    made on the other worker reaches it."""
    layout = ClusterLayout(replicas=1, extra=("--cluster-require-full-coverage", "no"))
    try:
        a, b = RedisStores.from_url(layout.url), RedisStores.from_url(layout.url)

        async def main() -> float:
            bus_master = layout.master_of("mcpgen:{bus}")
            sid = ""
            for _ in range(200):  # a session on another master than the bus's
                sid = f"s{uuid.uuid4().hex}"
                if layout.master_of(f"mcpgen:{{s:{sid}}}") != bus_master:
                    break
            victim = layout.master_of(f"mcpgen:{{s:{sid}}}")
            await a.sessions.create(SessionState(id=sid, version="2025-11-25"))
            await a.sessions.ready()  # (the first heartbeats learn the masters: it empties)
            assert await a.sessions.load(sid) is not None  # read from Redis, kept
            cache = a.sessions.cache
            assert cache is not None and sid in cache.entries
            command(victim, "WAIT", "1", "5000", timeout=6.0)
            epoch = cache.epoch
            killed = time.monotonic()
            layout.kill(victim)
            trusted_late = 0  # times the cache would have answered past the bound
            while sid in cache.entries and cache.epoch == epoch:
                assert time.monotonic() - killed < BOUND, "the cache was not emptied"
                late = time.monotonic() - killed > cache.stale_after + 0.5
                if late and cache.monotonic() < cache.fresh_until:
                    trusted_late += 1
                with contextlib.suppress(StoreUnavailableError):
                    await a.sessions.load(sid)  # (from Redis once the memory is stale)
                await asyncio.sleep(0.05)
            emptied = time.monotonic() - killed
            assert trusted_late == 0  # the dead master's heartbeat stopped: not fresh
            while True:  # the failover: the session is served again (read from Redis)
                assert time.monotonic() - killed < BOUND, "not served again in time"
                try:
                    assert await a.sessions.load(sid) is not None
                    break
                except StoreUnavailableError:
                    await asyncio.sleep(0.05)
            changed = SessionState(id=sid, version="2025-11-25", log_rank=3)
            await b.sessions.save(changed)
            deadline = time.monotonic() + 2 * cache.stale_after + 2.0
            while (await a.sessions.load(sid)) != changed:
                assert time.monotonic() < deadline, "the change never reached the cache"
                await asyncio.sleep(0.05)
            for stores in (a, b):
                await stores.sessions.aclose()
                await stores.bus.aclose()
            return emptied

        took = run(main())
        print(f"the cache emptied {took:.2f} s after the kill")
    finally:
        layout.close()
