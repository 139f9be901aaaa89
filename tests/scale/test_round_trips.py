"""The cost of Redis on the legacy hot path. A tools/call in an existing session is
answered from the worker's cache of session records: no round trip (the heartbeat
that keeps the cache trusted is per worker and time, not per request). Without the
cache, one round trip: the session's load, which also restarts its idle timeout.
Nothing is saved when a call changed nothing, and a JSON answer writes no SSE event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.stores.redis import RedisStores
from tests.scale.harness import fresh_redis_url
from tests.scale.measure import Monitor, build, heartbeat, legacy_calls
from tests.transports.asgidriver import Exchange, initialize, post, rpc

pytestmark = pytest.mark.needs_redis


def pipelined(commands: list[str]) -> int:
    """The round trips in `commands` if each is the session's script and the index's
    use, pipelined (MONITOR shows a pipeline's commands one by one)."""
    scripts = [c for c in commands if '"EVALSHA"' in c]
    uses = [c for c in commands if '"ZADD"' in c and '"XX"' in c]
    assert len(scripts) == len(uses) and len(commands) == 2 * len(scripts), commands
    return len(scripts)


def test_a_legacy_tools_call_costs_no_redis_round_trip_from_the_cache() -> None:
    calls = 200
    times, commands = asyncio.run(legacy_calls(build(fresh_redis_url()), calls))
    assert [c for c in commands if not heartbeat(c)] == []
    beats = [c for c in commands if heartbeat(c)]
    assert len(beats) <= sum(times) / 0.25 + 2  # four a second at the default bound


def test_without_the_cache_a_legacy_tools_call_costs_one_round_trip() -> None:
    calls = 40
    stores = RedisStores.from_url(fresh_redis_url(), session_stale_seconds=0)
    _, commands = asyncio.run(legacy_calls(build(stores), calls))
    assert pipelined(commands) == calls


def test_a_message_that_changes_the_session_costs_one_write() -> None:
    """logging/setLevel to another level each time: one save a call, nothing else."""
    calls = 20
    levels = ["debug", "error"]
    frame = rpc(1, "logging/setLevel", {"level": levels[0]})
    server = build(fresh_redis_url())

    async def alternate() -> list[str]:
        app: Any = server.asgi_app()
        session = await initialize(app)
        await post(app, session, frame)
        assert server.redis is not None
        await server.redis.sessions.ready()
        monitor = Monitor()
        for i in range(calls):
            level = levels[(i + 1) % 2]
            status, _, _ = await post(app, session, rpc(2, "logging/setLevel", {"level": level}))
            assert status == 200
        for _ in range(calls):  # the same level again: unchanged, nothing written
            status, _, _ = await post(app, session, rpc(3, "logging/setLevel", {"level": level}))
            assert status == 200
        return [c for c in monitor.stop() if not heartbeat(c)]

    commands = asyncio.run(alternate())
    assert pipelined(commands) == calls


def test_a_get_stream_opens_with_one_round_trip_to_the_event_store() -> None:
    """A legacy GET with nothing to replay claims the session's log and gets its priming
    event in one script (the priming id is given in the claim: `transports/_standalone`),
    so opening a stream costs the event store one round trip. Before, it cost two (the
    claim, then the priming event's append)."""
    server = build(fresh_redis_url())

    async def open_streams() -> list[str]:
        app: Any = server.asgi_app()
        session = await initialize(app)
        get = {**session, "accept": "text/event-stream"}
        assert server.redis is not None
        await server.redis.sessions.ready()
        commands = []
        for _ in range(2):  # the first one loads the script: count the second
            monitor = Monitor()
            stream = Exchange(app, "GET", get)
            status, _ = await stream.start()
            primed = await stream.block()
            assert status == 200 and primed is not None and "id" in primed
            commands = [c for c in monitor.stop() if not heartbeat(c)]
            await stream.disconnect()  # (its end releases the log: not counted)
        return commands

    commands = asyncio.run(open_streams())
    events = [c for c in commands if 'e-ids"' in c]  # every event store script names it
    assert len(events) == 1 and '"EVALSHA"' in events[0], commands
