"""Faults through the balancer (examples/cluster/run.sh: nginx, two workers, Redis):
what a client sees is what nginx hands on, so a worker's 503 must not become a 502 or a
hang on the way, and recovery must need no restart of anything."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scale.cluster_run import Cluster, _cmdline, cluster, descendants

pytestmark = pytest.mark.slow

LEGACY = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


def _frame(rid: int | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if rid is not None:
        body["id"] = rid
    return json.dumps(body).encode()


def _redis_pid(running: Cluster) -> int:
    found = [
        pid
        for pid in descendants(running.proc.pid)
        if b"redis-server" in _cmdline(pid).split(b"\x00")[0]  # (it retitles itself)
    ]
    assert len(found) == 1, found
    return found[0]


async def _open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    response = await http.post(url, content=_frame(0, "initialize", params), headers=LEGACY)
    assert response.status_code == 200, response.text
    session = {**LEGACY, "mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    done = await http.post(url, content=_frame(None, "notifications/initialized"), headers=session)
    assert done.status_code == 202
    return session


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
                session = await _open_session(http, running.url)
                rid = iter(range(1, 100_000))

                async def caller() -> None:
                    deadline = time.monotonic() + 30  # bounded, whatever happens
                    while time.monotonic() < deadline and "end" not in marks:
                        call = _frame(next(rid), "tools/call", {"name": "greet",
                                      "arguments": {"name": "Ada"}})  # fmt: skip
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
