"""Faults through the balancer (examples/cluster/run.sh: nginx, two workers, Redis):
what a client sees is what nginx hands on, so a worker's 503 must not become a 502 or a
hang on the way, and recovery must need no restart of anything."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scale.cluster_run import (
    Cluster,
    _cmdline,
    cluster,
    descendants,
    refused,
    worker_port,
)
from tests.scale.wire import (
    CHANGED,
    META,
    MODERN,
    frame,
    open_session_async,
    sse_events,
    until,
)

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis, pytest.mark.needs_nginx]


def _redis_pid(running: Cluster) -> int:
    found = [
        pid
        for pid in descendants(running.proc.pid)
        if b"redis-server" in _cmdline(pid).split(b"\x00")[0]  # (it retitles itself)
    ]
    assert len(found) == 1, found
    return found[0]


def test_a_redis_outage_through_nginx_is_a_503_json_rpc_error_then_service_recovers(
    tmp_path: Path,
) -> None:
    """Stop Redis (SIGSTOP) for 5 s while four clients keep calling a tool in a legacy
    session through nginx: every answer is either the result or a 503 carrying a JSON-RPC
    error (never a 502 or 504 from nginx, never a hang), and once Redis runs again the
    same workers serve the same session."""
    with cluster(2, tmp_path / "run.log") as running:
        redis_pid = _redis_pid(running)
        workers_before = set(running.worker_pids())
        seen: list[tuple[float, int, bytes, str | None]] = []
        marks: dict[str, float] = {}

        async def scenario() -> None:
            async with httpx.AsyncClient(timeout=15) as http:
                session = await open_session_async(http, running.url)
                rid = iter(range(1, 100_000))

                async def caller() -> None:
                    deadline = time.monotonic() + 30  # bounded, whatever happens
                    while time.monotonic() < deadline and "end" not in marks:
                        greet = {"name": "greet", "arguments": {"name": "Ada"}}
                        call = frame(next(rid), "tools/call", greet)
                        started = time.monotonic()
                        response = await http.post(running.url, content=call, headers=session)
                        seen.append(
                            (
                                started,
                                response.status_code,
                                response.content,
                                response.headers.get("retry-after"),
                            )
                        )
                        assert time.monotonic() - started < 5, "an answer, not a hang"
                        await asyncio.sleep(0.05)

                callers = [asyncio.ensure_future(caller()) for _ in range(4)]
                await asyncio.sleep(1.0)
                os.kill(redis_pid, signal.SIGSTOP)
                marks["stop"] = time.monotonic()
                try:
                    await asyncio.sleep(5.0)
                finally:
                    os.kill(redis_pid, signal.SIGCONT)
                marks["cont"] = time.monotonic()
                await asyncio.sleep(4.0)
                marks["end"] = time.monotonic()
                await asyncio.gather(*callers)

        asyncio.run(scenario())

        statuses = {status for _, status, _, _ in seen}
        assert statuses <= {200, 503}, statuses  # nothing nginx made up (502, 504)
        failed = [(t, body, retry) for t, status, body, retry in seen if status == 503]
        assert len(failed) >= 4, f"the outage was not felt: {len(failed)} 503s of {len(seen)}"
        for started, raw, retry in failed:
            assert marks["stop"] - 2.5 < started < marks["cont"], "a 503 outside the outage"
            error = json.loads(raw)["error"]
            assert error["code"] == -32603 and "unavailable" in error["message"]
            assert retry == "1"
        late = [(status, body) for t, status, body, _ in seen if t > marks["cont"] + 1.0]
        assert len(late) >= 8
        for status, raw in late:  # recovered: the same session, served again
            assert status == 200, raw
            assert json.loads(raw)["result"]["content"][0]["text"] == "Hello, Ada!"
        assert set(running.worker_pids()) == workers_before  # no worker was restarted
        served = {h.upstream for h in running.hits() if h.status == 200 and h.method == "POST"}
        assert len(served) == 2  # both workers served the session after the outage too


async def _dead(port: int) -> None:
    """Until the killed worker on `port` is dead, not dying: its stream's connection may
    close before its listening socket does (the kernel closes a dying process's sockets
    one by one), and a request nginx hands it in between is reset after it was sent, a
    502 nginx may not retry (a POST). run.sh starts it again only a second later."""
    for _ in range(500):
        if refused(port):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the worker on port {port} still accepts connections")


def _holders(ports: list[int]) -> list[int]:
    """The worker ports with an established TCP connection (nginx holds no idle
    upstream connections, so: the ones serving an open stream)."""
    held = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                if state == "01":  # ESTABLISHED
                    held.add(int(local.rsplit(":", 1)[1], 16))
    return [port for port in ports if port in held]


async def _read_stream(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], sink: list[tuple[str, Any]]
) -> None:
    """Append (event id, message or None) for each SSE event until the stream ends."""
    with contextlib.suppress(httpx.HTTPError):
        async with http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200
            async for event_id, message in sse_events(response):
                if event_id is not None:
                    sink.append((event_id, message))


def test_a_killed_workers_get_stream_resumes_elsewhere_and_loses_no_change(
    tmp_path: Path,
) -> None:
    """kill -9 the worker holding a legacy session's GET stream: the changes made while
    the client is away (on the other worker) are replayed after its Last-Event-ID by
    whichever worker nginx hands the reconnection to, each exactly once, and so are
    those made before, never twice."""
    with cluster(2, tmp_path / "run.log") as running:
        ports = [worker_port(pid) for pid in running.worker_pids()]

        async def scenario() -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
            async with httpx.AsyncClient(timeout=15) as http:
                session = await open_session_async(http, running.url)
                rid = iter(range(1, 1000))

                async def change() -> None:
                    call = frame(next(rid), "tools/call", {"name": "test_trigger_tool_change"})
                    response = await http.post(running.url, content=call, headers=session)
                    assert response.status_code == 200, response.text

                stream = {**session, "accept": "text/event-stream"}
                before: list[tuple[str, Any]] = []
                reading = asyncio.ensure_future(_read_stream(http, running.url, stream, before))
                await until(lambda: bool(before), 250)
                holders = _holders(ports)
                assert len(holders) == 1, holders
                for _ in range(2):
                    await change()
                await asyncio.sleep(0.5)
                victim = next(p for p in running.worker_pids() if worker_port(p) == holders[0])
                os.kill(victim, signal.SIGKILL)
                await asyncio.wait_for(reading, 10)  # the stream ends with its worker
                await _dead(holders[0])
                for _ in range(3):
                    await change()  # (nginx moves a refused connection to the other worker)
                last = [eid for eid, _ in before][-1]
                after: list[tuple[str, Any]] = []
                headers = {**stream, "last-event-id": last}
                resumed = asyncio.ensure_future(_read_stream(http, running.url, headers, after))
                await until(lambda: sum(1 for _, m in after if m) >= 3, 250)
                await asyncio.sleep(0.5)  # a duplicate would come meanwhile
                resumed.cancel()
                with contextlib.suppress(BaseException):
                    await resumed
                return before, after

        before, after = asyncio.run(asyncio.wait_for(scenario(), 90))
        heard_before = [eid for eid, m in before if m and m["method"] == CHANGED]
        heard_after = [eid for eid, m in after if m and m["method"] == CHANGED]
        assert len(heard_before) == 2, before
        assert len(heard_after) == 3, after  # all three, once each
        assert not set(heard_before) & set(heard_after)


async def _listen(http: httpx.AsyncClient, url: str, sink: list[str]) -> None:
    """A modern listen stream: the method of each notification, until it ends."""
    params = {"notifications": {"toolsListChanged": True}, "_meta": META}
    body = frame(1, "subscriptions/listen", params)
    headers = {**MODERN, "mcp-method": "subscriptions/listen"}
    with contextlib.suppress(httpx.HTTPError):
        async with http.stream("POST", url, content=body, headers=headers) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    sink.append(json.loads(line[5:])["method"])


async def _relisten(http: httpx.AsyncClient, url: str, sink: list[str]) -> None:
    """Open a listen stream again as a client does after losing one: an answer other
    than the stream (nginx's 502 while it still counts the killed worker in) is retried,
    a bounded number of times."""
    for _ in range(20):
        with contextlib.suppress(AssertionError):
            await _listen(http, url, sink)
        if sink:
            return
        await asyncio.sleep(0.25)


def test_a_killed_workers_listen_stream_is_opened_again_through_nginx(tmp_path: Path) -> None:
    """kill -9 the worker holding a modern listen stream: the stream ends (it has no
    event ids to resume by: the client lists again), and a listen opened again through
    nginx hears every later change once, wherever the changes are made."""
    with cluster(2, tmp_path / "run.log") as running:
        ports = [worker_port(pid) for pid in running.worker_pids()]

        async def scenario() -> tuple[list[str], list[str]]:
            async with httpx.AsyncClient(timeout=15) as http:

                async def change(rid: int) -> None:
                    params = {"name": "test_trigger_tool_change", "arguments": {}, "_meta": META}
                    headers = {**MODERN, "mcp-method": "tools/call"}
                    headers["mcp-name"] = "test_trigger_tool_change"
                    call = frame(rid, "tools/call", params)
                    response = await http.post(running.url, content=call, headers=headers)
                    assert response.status_code == 200, response.text

                async def heard(sink: list[str], count: int) -> None:
                    await until(lambda: sink.count(CHANGED) >= count, 1000)  # up to 20 s
                    await asyncio.sleep(0.5)  # a duplicate would come meanwhile

                first: list[str] = []
                reading = asyncio.ensure_future(_listen(http, running.url, first))
                await until(lambda: bool(first), 1000)  # up to 20 s on a loaded machine
                holders = _holders(ports)
                assert len(holders) == 1, holders
                await change(2)
                await heard(first, 1)
                victim = next(p for p in running.worker_pids() if worker_port(p) == holders[0])
                os.kill(victim, signal.SIGKILL)
                await asyncio.wait_for(reading, 20)  # the stream ends with its worker
                await _dead(holders[0])
                again: list[str] = []
                resumed = asyncio.ensure_future(_relisten(http, running.url, again))
                await until(lambda: bool(again), 1000)
                for rid in (3, 4):
                    await change(rid)
                await heard(again, 2)
                resumed.cancel()
                with contextlib.suppress(BaseException):
                    await resumed
                return first, again

        first, again = asyncio.run(asyncio.wait_for(scenario(), 150))
        ack = "notifications/subscriptions/acknowledged"
        assert first == [ack, CHANGED]
        assert again == [ack, CHANGED, CHANGED]
