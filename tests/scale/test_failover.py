"""Two workers on a Sentinel-managed Redis (a primary, a replica, three sentinels, real
processes): the primary is killed with SIGKILL while clients use legacy sessions, SSE
replay, tasks and listen streams. The sentinels promote the replica; the workers follow
(`redis+sentinel://`, `_connect.client_for`), requests meanwhile fail cleanly (503) and
succeed again within a bound measured here; nothing the primary had replicated is lost.

What asynchronous replication can lose, and how mcpgen reports it: a write the primary
acknowledged but had not sent to the replica yet is gone after the promotion. The second
test makes that happen on purpose (the replica is stopped while a session is created):
the lost session is then unknown on every worker (404, the client starts a new one),
never answered from a worker's cache (a failover empties the caches) nor with a 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import httpx
import pytest

from mcpgen import Client, ToolTask
from mcpgen_types import latest as t
from tests.scale.harness import balanced, build
from tests.scale.test_two_workers import sse
from tests.scale.wire import INITIALIZE, LEGACY, frame, get_stream, open_session_async, settle
from tests.stores.redis_ha import (
    ClusterLayout,
    Processes,
    SentinelLayout,
    command,
    replicated,
    server_argv,
)
from tests.stores.redis_server import _free_port
from tests.transports.httpharness import serve

# Real layouts (sentinels, a cluster) killed and promoted, 15 to 30 s a test: outside the
# quick tier, as the other HA legs (CONTRIBUTING.md).
pytestmark = pytest.mark.slow

T = TypeVar("T")
ADD = frame(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
BOUND = 20.0  # seconds: the test's limit (the target, and what is measured, is < 5 s)
MEASURED: dict[str, float] = {}  # what the runs measured (printed, for the docs)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 90))


@contextlib.contextmanager
def sentinel_workers() -> Iterator[tuple[SentinelLayout, list[str]]]:
    layout = SentinelLayout()
    try:
        with contextlib.ExitStack() as stack:
            urls = [stack.enter_context(serve(build(layout.url).asgi_app()))[0] for _ in "ab"]
            yield layout, urls
    finally:
        layout.close()


def answer(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    body = response.text
    message = sse(body)[-1][1] if body.startswith(("event:", "id:", "data:")) else json.loads(body)
    text: str = message["result"]["content"][0]["text"]
    return text


async def until_served(
    http: httpx.AsyncClient, urls: list[str], since: float
) -> tuple[float, Counter[int]]:
    """Open a session (a write: it needs the primary) on each worker in turn (bounded:
    400 requests) until both succeeded; every other answer must be a clean 503. The
    seconds from `since` until the second worker succeeded, and the statuses seen."""
    statuses: Counter[int] = Counter()
    recovered: dict[int, float] = {}
    for n in range(400):
        worker = n % 2
        response = await http.post(urls[worker], content=INITIALIZE, headers=LEGACY)
        statuses[response.status_code] += 1
        if response.status_code == 200:
            assert response.headers["mcp-session-id"]
            recovered.setdefault(worker, time.monotonic() - since)
            if len(recovered) == 2:
                return max(recovered.values()), statuses
        else:
            assert response.status_code == 503, response.text
            assert "unavailable" in response.json()["error"]["message"]
        assert time.monotonic() - since < BOUND, statuses
        await asyncio.sleep(0.05)
    raise AssertionError(f"not served again: {statuses}")


async def through_a_failover(urls: list[str], fail: Callable[[], None], name: str) -> None:
    """Traffic of every kind, then `fail()` (which kills a primary once its writes are
    replicated), the time until both workers write again, then everything from before
    is still there and every kind of traffic works again."""
    async with httpx.AsyncClient(timeout=15) as http:
        sessions = [await open_session_async(http, urls[i % 2]) for i in range(4)]
        for i, session in enumerate(sessions):
            assert answer(await http.post(urls[i % 2 - 1], content=ADD, headers=session)) == "3"
        chatty = frame(5, "tools/call", {"name": "chatty", "arguments": {}})
        events = sse((await http.post(urls[0], content=chatty, headers=sessions[0])).text)
        first_id = events[0][0]
        assert first_id is not None and len(events) == 3
        modern, _ = balanced(urls)
        async with Client.http(urls[0], httpx_client=modern, era="modern") as client:
            finished = await client.call_tool("slow", {"seconds": 0.05}, task=True)
            assert isinstance(finished, ToolTask)
            await finished.result(timeout=10, poll=0.05)

            killed = time.monotonic()
            fail()
            took, statuses = await until_served(http, urls, killed)
            MEASURED[name] = took
            print(f"{name}: served again after {took:.2f} s; statuses {dict(statuses)}")

            # nothing acknowledged and replicated is lost: every session, on both workers
            for session in sessions:
                for url in urls:
                    assert answer(await http.post(url, content=ADD, headers=session)) == "3"
            # the finished task and its result, through either worker
            for _ in range(2):
                assert (await finished.get()).status == "completed"
            block = (await finished.result(timeout=10)).content[0]
            assert isinstance(block, t.TextContent) and block.text == "slept 0.05"
            # a new task runs and is followed through both workers
            fresh = await client.call_tool("slow", {"seconds": 0.05}, task=True)
            assert isinstance(fresh, ToolTask)
            assert (await fresh.result(timeout=10, poll=0.05)).content
        # SSE resumption after Last-Event-ID, on the other worker
        headers = {**sessions[0], "accept": "text/event-stream", "last-event-id": first_id}
        async with http.stream("GET", urls[1], headers=headers) as stream:
            replayed: list[dict[str, Any]] = []
            buffer = ""
            async for chunk in stream.aiter_text():
                buffer += chunk
                replayed = [e[1] for e in sse(buffer)]
                if len(replayed) >= 2:
                    break
        assert replayed[0]["params"]["data"] == "two"
        assert replayed[1]["id"] == 5
        # the bus follows the new primary: a listen stream on one worker hears a change
        # made on the other
        async with get_stream(http, urls[0], sessions[1]) as reader:
            bump = frame(9, "tools/call", {"name": "bump", "arguments": {}})
            for _ in range(20):
                bumped = await http.post(urls[1], content=bump, headers=sessions[2])
                assert answer(bumped) == "bumped"
                with contextlib.suppress(AssertionError):
                    await settle(reader, 1)
                if reader.changes():
                    break
            assert reader.changes()


def test_a_killed_primary_is_replaced_and_nothing_replicated_is_lost() -> None:
    with sentinel_workers() as (layout, urls):
        old = layout.master()

        def fail() -> None:
            replicated(layout.master(), "ha-probe")
            layout.kill(old)

        run(through_a_failover(urls, fail, "sentinel failover"))
        assert layout.master() != old
    assert MEASURED["sentinel failover"] < BOUND


def test_a_killed_cluster_master_is_replaced_and_nothing_replicated_is_lost() -> None:
    """The same on a Redis Cluster of three masters with a replica each: the master of
    the bus's slot (the bus, the event store) is killed; sessions and tasks on it fail
    over with it, those on the other masters are served throughout."""
    layout = ClusterLayout(replicas=1)
    try:
        with contextlib.ExitStack() as stack:
            urls = [stack.enter_context(serve(build(layout.url).asgi_app()))[0] for _ in "ab"]
            old = layout.master_of("mcpgen:{bus}")

            def fail() -> None:
                replicated(old, "mcpgen:{bus}ha-probe")
                layout.kill(old)

            run(through_a_failover(urls, fail, "cluster failover"))
            assert layout.master_of("mcpgen:{bus}") != old
    finally:
        layout.close()
    assert MEASURED["cluster failover"] < BOUND


def test_a_write_the_replica_never_got_is_lost_cleanly() -> None:
    with sentinel_workers() as (layout, urls):

        async def main() -> None:
            async with httpx.AsyncClient(timeout=15) as http:
                kept = await open_session_async(http, urls[0])
                replicated(layout.master(), "ha-probe")
                replica = layout.processes[layout.replica]
                replica.send_signal(signal.SIGSTOP)
                try:
                    # the primary drops the link (what it sent before is still in the
                    # stopped replica's socket buffer): nothing written from now on
                    # reaches the replica
                    dropped = command(layout.master(), "CLIENT", "KILL", "TYPE", "replica")
                    assert dropped.startswith(b":1"), dropped
                    lost = await open_session_async(http, urls[0])  # acknowledged: 200
                    for url in urls:
                        assert answer(await http.post(url, content=ADD, headers=lost)) == "3"
                    old = layout.master()
                    killed = time.monotonic()
                    layout.kill(old)
                finally:
                    replica.send_signal(signal.SIGCONT)
                took, _ = await until_served(http, urls, killed)
                MEASURED["failover after a lost write"] = took
                print(f"failover with a lost write: served again after {took:.2f} s")
                assert layout.master() == layout.replica
                for url in urls:  # unknown everywhere (a cache would still hold it)
                    gone = await http.post(url, content=ADD, headers=lost)
                    assert gone.status_code == 404, gone.text
                    assert answer(await http.post(url, content=ADD, headers=kept)) == "3"

        run(main())


def test_a_primary_refusing_writes_without_replicas_answers_503(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`min-replicas-to-write 1` (narrowing what a failover can lose) and no replica in
    reach: Redis refuses writes (NOREPLICAS), which mcpgen answers as an outage, 503
    with a generic JSON-RPC error (the detail in the log only), never a 500."""
    layout = Processes("mcpgen-noreplicas-")
    port = _free_port()
    try:
        argv = [*server_argv(port, layout.node_dir(port)), "--min-replicas-to-write", "1"]
        layout.spawn(port, argv)
        app = build(f"redis://127.0.0.1:{port}/0").asgi_app()
        with serve(app) as (url, _), httpx.Client(timeout=15) as http:
            refused = http.post(url, content=INITIALIZE, headers=LEGACY)
            assert refused.status_code == 503, refused.text
            error = refused.json()["error"]
            assert error["code"] == -32603
            assert error["message"] == "service temporarily unavailable; try again"
            assert "NOREPLICAS" in caplog.text  # for the operator, not the client
            command(port, "CONFIG", "SET", "min-replicas-to-write", "0")
            assert http.post(url, content=INITIALIZE, headers=LEGACY).status_code == 200
    finally:
        layout.close()
