"""SIGTERM drains one worker (`mcpgen serve ... --fd K`, as the supervisor runs it): it
stops accepting at once, lets the request in flight finish, finishes the tasks that can
finish within its drain time and cancels the others with a status message saying why
(their records written before it exits), and exits 0. The tools wait for a file the test
creates, so nothing here depends on how fast the machine is."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen import Client, ToolTask
from tests.processes import free_port
from tests.scale.drain_worker import SPEC, refused, worker
from tests.scale.harness import KEY, fresh_redis_url
from tests.scale.wire import META, MODERN, frame, open_session_async, sse_events, until


def _call(url: str, name: str, arguments: dict[str, Any]) -> httpx.Response:
    params = {"name": name, "arguments": arguments, "_meta": META}
    headers = {**MODERN, "mcp-method": "tools/call", "mcp-name": name}
    return httpx.post(url, content=frame(1, "tools/call", params), headers=headers, timeout=60)


def _until(condition: Any, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_sigterm_finishes_the_request_in_flight_refuses_new_connections_and_exits_0(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "open"
    with worker(tmp_path, drain=30) as running, concurrent.futures.ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(_call, running.url, "gate", {"path": str(gate)})
        time.sleep(0.5)  # the request reached the worker (it waits for the gate)
        assert not in_flight.done()
        began = time.monotonic()
        running.proc.send_signal(15)
        # New connections are refused while the request is still being answered.
        assert _until(lambda: refused(running.port)), "the worker still accepts"
        assert not in_flight.done() and running.proc.poll() is None
        gate.touch()
        answer = in_flight.result(timeout=60)
        status = running.proc.wait(timeout=60)
    assert answer.status_code == 200, answer.text
    assert json.loads(answer.text)["result"]["content"][0]["text"] == "passed open"
    assert status == 0
    assert time.monotonic() - began < 30  # it did not wait out its drain time
    log = (tmp_path / "worker.log").read_text()
    assert "Traceback" not in log, log


@pytest.mark.slow
@pytest.mark.needs_redis
def test_tasks_finish_within_the_drain_time_or_end_cancelled_saying_why(tmp_path: Path) -> None:
    """Two tasks run in the worker when it gets SIGTERM: the one that can finish within
    the drain time completes; the other is cancelled when the drain time runs out, with a
    status message naming the cause. Another worker on the same Redis reads both."""
    env = {"MCPGEN_REDIS_URL": fresh_redis_url(), "MCPGEN_STATE_KEYS": KEY}
    short, long = tmp_path / "short", tmp_path / "long"

    async def start(url: str) -> tuple[str, str]:
        async with Client.http(url, era="modern") as client:
            first = await client.call_tool("job", {"path": str(short)}, task=True)
            second = await client.call_tool("job", {"path": str(long)}, task=True)
            assert isinstance(first, ToolTask) and isinstance(second, ToolTask)
            return first.id, second.id

    async def read(url: str, ids: tuple[str, ...]) -> list[Any]:
        async with Client.http(url, era="modern") as client:
            return [await client.get_task(task_id) for task_id in ids]

    with worker(tmp_path, drain=3, env=env) as first_worker:
        ids = asyncio.run(start(first_worker.url))
        first_worker.proc.send_signal(15)
        assert _until(lambda: refused(first_worker.port))
        short.touch()  # finishes within the drain time; `long` never does
        assert first_worker.proc.wait(timeout=60) == 0
    with worker(tmp_path, drain=3, env=env) as second_worker:
        done, cancelled = asyncio.run(read(second_worker.url, ids))
    assert done.status == "completed", done
    assert cancelled.status == "cancelled", cancelled
    assert "the worker running it stopped" in (cancelled.status_message or "")
    assert "drain time 3 s" in (cancelled.status_message or "")


@pytest.mark.slow
def test_a_request_still_running_when_the_drain_time_ends_gets_a_503_error(
    tmp_path: Path,
) -> None:
    """Past the drain time the request's work is cancelled, and the client is told so
    (a JSON-RPC error with its id, status 503), never left with an empty answer."""
    with worker(tmp_path, drain=1) as running, concurrent.futures.ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(_call, running.url, "gate", {"path": str(tmp_path / "never")})
        time.sleep(0.5)
        running.proc.send_signal(15)
        answer = in_flight.result(timeout=60)
        status = running.proc.wait(timeout=60)
    assert answer.status_code == 503, answer.text
    error = json.loads(answer.text)
    assert error["id"] == 1 and error["error"]["code"] == -32603
    assert "drain time 1 s ran out" in error["error"]["message"]
    assert status == 0


def test_streams_that_only_wait_end_at_once_and_the_idle_worker_exits(tmp_path: Path) -> None:
    """A legacy GET stream and a listen stream are open, nothing else: SIGTERM ends both
    at once (the listen stream with its final result), well before the drain time, and
    the worker exits 0."""

    async def scenario(url: str, stop: Any) -> tuple[float, list[Any]]:
        async with httpx.AsyncClient(timeout=60) as http:
            session = await open_session_async(http, url)
            headers = {**session, "accept": "text/event-stream"}
            body = frame(7, "subscriptions/listen", {"notifications": {}, "_meta": META})
            listen_headers = {**MODERN, "mcp-method": "subscriptions/listen"}
            got: list[Any] = []

            async def read(method: str, **kwargs: Any) -> None:
                async with http.stream(method, url, **kwargs) as response:
                    assert response.status_code == 200
                    async for _, message in sse_events(response):
                        got.append(message)

            streams = [
                asyncio.ensure_future(read("GET", headers=headers)),
                asyncio.ensure_future(read("POST", content=body, headers=listen_headers)),
            ]
            await until(lambda: len(got) >= 2, 500)  # the priming event, the acknowledgement
            began = time.monotonic()
            stop()
            await asyncio.wait_for(asyncio.gather(*streams), 60)
            return time.monotonic() - began, got

    with worker(tmp_path, drain=30) as running:
        took, got = asyncio.run(scenario(running.url, lambda: running.proc.send_signal(15)))
        status = running.proc.wait(timeout=60)
    assert status == 0
    assert took < 20, took  # not the 30 s drain time
    finals = [m for m in got if isinstance(m, dict) and m.get("id") == 7]
    assert len(finals) == 1 and "result" in finals[0], got


@pytest.mark.slow
def test_requests_queued_when_sigterm_comes_are_answered(tmp_path: Path) -> None:
    """A single `mcpgen serve` (its own listening socket) is stopped (SIGSTOP) while 40
    clients connect and send a request: the kernel completes the connections and holds
    them. SIGTERM, then SIGCONT: every one of them gets its answer before the socket
    closes, none is reset (closing a listening socket resets what it holds queued)."""
    spec, gate = tmp_path / "app.py", tmp_path / "open"
    spec.write_text(SPEC)
    gate.touch()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    cmd = [sys.executable, "-m", "mcpgen", "serve", f"{spec}:server", "--transport", "http"]
    proc = subprocess.Popen([*cmd, "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        assert _until(lambda: not refused(port)), "the server does not listen"
        assert _call(url, "gate", {"path": str(gate)}).status_code == 200
        os.kill(proc.pid, signal.SIGSTOP)
        with concurrent.futures.ThreadPoolExecutor(40) as pool:
            sent = [pool.submit(_call, url, "gate", {"path": str(gate)}) for _ in range(40)]
            time.sleep(1.5)  # all connected, all requests written: held by the kernel
            os.kill(proc.pid, signal.SIGTERM)
            os.kill(proc.pid, signal.SIGCONT)
            answers = [future.result(timeout=60).status_code for future in sent]
        status = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert answers == [200] * 40
    assert status == -signal.SIGTERM  # a single process exits by the signal (production.md)
