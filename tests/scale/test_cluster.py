"""examples/cluster/run.sh: Redis, N workers of examples/everything.py and nginx balancing
round-robin per request with no stickiness. Whatever worker a request lands on must
serve it: legacy sessions, listen streams, tasks and SSE replay live in Redis.

The client tests check, from nginx's access log, that the requests of one session did
reach several workers; the conformance tests run the official suite's three server legs
through the balancer with 2 and 3 workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from mcpgen import Client, HttpStatusError, ToolTask
from mcpgen_types import ext_tasks as x
from tests import tooling
from tests.conformance import runner
from tests.conformance.test_conformance import MIN_SCENARIOS, TASK_SCENARIOS
from tests.interop import test_npm_clients as npm
from tests.interop import test_official_python as official_py
from tests.processes import free_port
from tests.scale.cluster_run import (
    REPO,
    Cluster,
    alive,
    cluster,
    descendants,
    refused,
    stop,
    worker_port,
)
from tests.scale.wire import sse_fields
from tests.stores.redis_server import redis_url

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis, pytest.mark.needs_nginx]


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(2, tmp_path_factory.mktemp("cluster2") / "run.log") as running:
        yield running


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(3, tmp_path_factory.mktemp("cluster3") / "run.log") as running:
        yield running


def upstreams_of(running: Cluster, session: str) -> set[str]:
    return {hit.upstream for hit in running.hits() if hit.session == session and hit.status < 300}


def test_modern_requests_go_round_robin(two: Cluster) -> None:
    async def scenario() -> None:
        async with Client.http(two.url, era="modern") as client:
            for n in range(6):
                result = await client.call_tool("greet", {"name": f"n{n}"})
                assert result.content[0].text == f"Hello, n{n}!"  # type: ignore[union-attr]

    before = len(two.hits())
    asyncio.run(scenario())
    served = {hit.upstream for hit in two.hits()[before:] if hit.status == 200}
    assert len(served) == 2, two.hits()[before:]


def test_a_legacy_session_is_served_by_every_worker(two: Cluster) -> None:
    async def scenario() -> None:
        async with Client.http(two.url, era="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            for n in range(6):
                result = await client.call_tool("greet", {"name": f"n{n}"})
                assert result.content[0].text == f"Hello, n{n}!"  # type: ignore[union-attr]

    asyncio.run(scenario())
    by_session: dict[str, set[str]] = {}
    for hit in two.hits():
        if hit.session and hit.method == "POST" and hit.status == 200:
            by_session.setdefault(hit.session, set()).add(hit.upstream)
    assert any(len(ups) == 2 for ups in by_session.values()), by_session


def test_a_legacy_listener_hears_changes_made_on_any_worker(two: Cluster) -> None:
    """A session's notification stream sits on one worker; the changes are made by calls
    that round robin spreads over both: every one of them must reach the listener."""

    async def scenario() -> int:
        heard = 0
        async with (
            Client.http(two.url, era="legacy") as listener,
            Client.http(two.url, era="legacy") as actor,
        ):
            notes = listener.listen(tools=True).__aiter__()
            first = asyncio.ensure_future(notes.__anext__())
            await asyncio.sleep(0.5)  # the GET stream is open
            pending = first
            for _ in range(4):
                await actor.call_tool("test_trigger_tool_change", {})
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(pending), 5)
                    heard += 1
                    pending = asyncio.ensure_future(notes.__anext__())
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        return heard

    assert asyncio.run(scenario()) == 4


def test_a_task_is_followed_on_any_worker(two: Cluster) -> None:
    async def scenario() -> str:
        async with Client.http(two.url, era="modern") as client:
            handle = await client.call_tool("slow_compute", {"seconds": 1, "label": "x"}, task=True)
            assert isinstance(handle, ToolTask), handle
            result = await client.wait_task(handle, timeout=30, poll=0.2)
            return result.content[0].text  # type: ignore[union-attr]

    before = len(two.hits())
    assert asyncio.run(scenario()) == "Computed x in 1 s"
    polls = {hit.upstream for hit in two.hits()[before:] if hit.status == 200}
    assert len(polls) == 2


def test_sse_replay_after_last_event_id_on_another_worker(two: Cluster) -> None:
    """A 2025-11-25 session's tools/call stream: the client keeps only its first event's
    id, then GETs with Last-Event-ID (round robin sends it to the other worker) and gets
    the events it missed, the result among them."""
    base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "replay", "version": "1"},
        },
    }
    with httpx.Client(timeout=30) as http:
        answer = http.post(two.url, json=init, headers=base)
        sid = answer.headers["mcp-session-id"]
        headers = {**base, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(two.url, json=note, headers=headers).status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "test_tool_with_progress",
                "arguments": {},
                "_meta": {"progressToken": 7},
            },
        }
        whole = http.post(two.url, json=call, headers=headers)
        events = [e for e in sse_fields(whole.text) if "id" in e]
        assert events and any('"id":1' in e.get("data", "") for e in events), whole.text
        first = events[0]["id"]
        stream = {**headers, "accept": "text/event-stream", "last-event-id": first}
        replayed: list[dict[str, str]] = []
        with http.stream("GET", two.url, headers=stream) as response:
            assert response.status_code == 200
            text = ""
            for chunk in response.iter_text():
                text += chunk
                replayed = [e for e in sse_fields(text) if e.get("data")]
                if any('"id":1' in e["data"] for e in replayed):
                    break
        missed = [e["data"] for e in events[1:] if e.get("data")]
        assert [e["data"] for e in replayed] == missed
    served = upstreams_of(two, sid)
    assert len(served) == 2, two.hits()


def test_the_deployment_page_shows_the_nginx_config_run_sh_writes(two: Cluster) -> None:
    page = (REPO / "docs" / "guide" / "deployment.md").read_text()
    shown = [
        block
        for block in re.findall(r"```nginx\n(.*?)```", page, re.DOTALL)
        if block.startswith("# Generated by examples/cluster/run.sh.")
    ]
    written = (two.dir / "nginx.conf").read_text().replace(str(two.dir), "/tmp/mcpgen-cluster.X")
    written = written.replace("user root;\n", "")  # only when run as root
    ports = re.findall(r"server 127\.0\.0\.1:(\d+) ", written)
    for n, port in enumerate(ports):
        written = written.replace(f"127.0.0.1:{port} ", f"127.0.0.1:{9001 + n} ")
    listen = re.search(r"listen 127\.0\.0\.1:(\d+);", written)
    assert listen is not None
    written = written.replace(listen[0], "listen 127.0.0.1:8080;")
    assert shown == [written]


@pytest.mark.needs_node
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("spec", runner.SERVER_LEGS)
def test_conformance_leg_through_the_cluster(
    workers: int, spec: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    runner.suite_cli()
    running: Cluster = request.getfixturevalue({2: "two", 3: "three"}[workers])
    before = len(running.hits())
    leg = runner.run_leg(running.url, spec, tmp_path / spec)
    passed, failed, problems = runner.judge([leg])
    assert not problems, "\n".join(problems)
    assert len(leg.scenarios) >= MIN_SCENARIOS[spec], sorted(leg.scenarios)
    assert failed == 0 and passed == len(leg.scenarios)
    if spec == "default":
        assert len([n for n in leg.scenarios if n.startswith("tasks-")]) >= TASK_SCENARIOS
    assert len({hit.upstream for hit in running.hits()[before:]}) == workers


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_script_stops_everything_it_started(sig: signal.Signals, tmp_path: Path) -> None:
    with cluster(2, tmp_path / "run.log") as running:
        started = descendants(running.proc.pid)
        assert len(running.worker_pids()) == 2
        stop(running.proc, sig)
        assert running.proc.returncode == 0
        left = {pid for pid in started if alive(pid)}
        assert not left, left
        assert not running.dir.exists()


def test_killed_workers_lose_no_legacy_session_and_no_listener(tmp_path: Path) -> None:
    """kill -9 each worker in turn while a legacy session is open and its listen (GET)
    stream is held by one of them: the session goes on through the other worker, the
    listener hears every change made after its stream came back, and run.sh restarts
    the dead worker."""
    with cluster(2, tmp_path / "run.log") as running:

        async def scenario() -> int:
            heard = 0
            async with (
                Client.http(running.url, era="legacy") as listener,
                Client.http(running.url, era="legacy") as actor,
            ):
                notes = listener.listen(tools=True).__aiter__()
                pending = asyncio.ensure_future(notes.__anext__())
                await asyncio.sleep(0.5)
                for round_, victim in enumerate(running.worker_pids()):  # both, in turn
                    port = worker_port(victim)
                    os.kill(victim, signal.SIGKILL)
                    while not refused(port):  # dead, not dying: its sockets are closed
                        await asyncio.sleep(0.02)
                    for n in range(4):
                        result = await actor.call_tool("greet", {"name": f"k{round_}{n}"})
                        assert result.content[0].text == f"Hello, k{round_}{n}!"  # type: ignore[union-attr]
                    for _ in range(600):  # run.sh starts it again on the same port
                        if not refused(port):
                            break
                        await asyncio.sleep(0.1)
                    await asyncio.sleep(1.5)  # the listen stream is open again
                for _ in range(3):
                    await actor.call_tool("test_trigger_tool_change", {})
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(pending), 5)
                        heard += 1
                        pending = asyncio.ensure_future(notes.__anext__())
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
            return heard

        assert asyncio.run(scenario()) == 3
        assert len(running.worker_pids()) == 2


# -- mcpgen serve --workers N: one port, N processes, one supervisor ----------------------


def _serve(*args: str) -> list[str]:
    spec = f"{REPO / 'examples' / 'everything.py'}:server"
    return [sys.executable, "-m", "mcpgen", "serve", spec, "--transport", "http", *args]


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("MCPGEN_REDIS_URL", "MCPGEN_STATE_KEYS"):
        env.pop(name, None)
    return env


def test_serve_refuses_several_workers_without_redis() -> None:
    done = subprocess.run(
        _serve("--workers", "2"),
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--workers 2 needs shared state" in done.stderr and "--allow-memory" in done.stderr


def _fd_workers(parent: int) -> list[int]:
    found = [pid for pid in descendants(parent) if b"\x00--fd\x00" in _cmdline_of(pid)]
    return sorted(found)


def _cmdline_of(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _wait(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_serve_runs_workers_on_one_port_sharing_redis(tmp_path: Path) -> None:
    """Two workers on one inherited socket, one Redis, keys generated for the run: a
    legacy session goes on after kill -9 of a worker (the supervisor starts another);
    SIGTERM stops them all."""
    redis = redis_url().rsplit("/", 1)[0] + "/7"
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            _serve("--workers", "2", "--port", str(port), "--redis", redis),
            env=_clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait(lambda: len(_fd_workers(proc.pid)) == 2 and not refused(port), "two workers")
        # Each worker runs the lean entry point, without the command line's packages.
        assert all(b"mcpgen.cli._worker" in _cmdline_of(pid) for pid in _fd_workers(proc.pid))

        async def calls(client: Client, tag: str) -> None:
            for n in range(4):
                result = await client.call_tool("greet", {"name": f"{tag}{n}"})
                assert result.content[0].text == f"Hello, {tag}{n}!"  # type: ignore[union-attr]

        async def scenario() -> None:
            async with Client.http(url, era="legacy") as client:
                await calls(client, "a")
                victim = _fd_workers(proc.pid)[0]
                os.kill(victim, signal.SIGKILL)
                # Reaped by the supervisor: every thread gone, its connections closed.
                _wait(lambda: not Path(f"/proc/{victim}").exists(), "the worker is reaped")
                await calls(client, "b")
                _wait(lambda: len(_fd_workers(proc.pid)) == 2, "the supervisor restarts it")
                await calls(client, "c")
            async with Client.http(url, era="modern") as client:
                await calls(client, "m")

        asyncio.run(scenario())
        started = descendants(proc.pid)
    finally:
        stop(proc)
    text = log.read_text()
    assert proc.returncode == 0, text
    assert "MCPGEN_STATE_KEYS is unset" in text and "2 workers" in text
    assert not {pid for pid in started if alive(pid)}


def _connections_to(port: int) -> int:
    """Established TCP connections whose server side is the loopback `port`."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port and fields[3] == "01":
            count += 1
    return count


def test_a_worker_killed_mid_request_fails_that_request_only(tmp_path: Path) -> None:
    """kill -9 the worker running a legacy session's tools/call: that call fails (nginx
    does not send a POST twice: it may have run), the session goes on at once through
    the other worker."""
    with cluster(2, tmp_path / "run.log") as running:

        async def scenario() -> None:
            async with Client.http(running.url, era="legacy") as client:
                await client.call_tool("greet", {"name": "a"})
                ports = {pid: worker_port(pid) for pid in running.worker_pids()}
                before = {pid: _connections_to(port) for pid, port in ports.items()}
                call = asyncio.ensure_future(client.call_tool("slow_compute", {"seconds": 5}))
                busy: list[int] = []
                for _ in range(200):
                    await asyncio.sleep(0.02)
                    busy = [p for p, port in ports.items() if _connections_to(port) > before[p]]
                    if len(busy) == 1:
                        break
                assert len(busy) == 1, (before, busy)
                os.kill(busy[0], signal.SIGKILL)
                with pytest.raises(HttpStatusError) as failed:
                    await call
                assert failed.value.status == 502
                result = await client.call_tool("greet", {"name": "b"})
                assert result.content[0].text == "Hello, b!"  # type: ignore[union-attr]

        asyncio.run(scenario())


def test_a_task_whose_worker_died_fails_cleanly(tmp_path: Path) -> None:
    """Both workers killed in turn while a task runs (so its own worker surely died):
    polling through the restarted workers sees it failed with a clear error once its
    lease runs out, never left working."""
    with cluster(2, tmp_path / "run.log") as running:

        async def scenario() -> x.GetTaskResult:
            async with Client.http(running.url, era="modern") as client:
                handle = await client.call_tool("slow_compute", {"seconds": 120}, task=True)
                assert isinstance(handle, ToolTask), handle
                for victim in running.worker_pids():
                    port = worker_port(victim)
                    os.kill(victim, signal.SIGKILL)
                    while not refused(port):
                        await asyncio.sleep(0.02)
                    while refused(port):  # run.sh starts it again
                        await asyncio.sleep(0.1)
                for _ in range(120):
                    state = await client.get_task(handle.id)
                    if state.status != "working":
                        return state
                    await asyncio.sleep(0.5)
                raise AssertionError("the orphaned task stayed working")

        state = asyncio.run(scenario())
        assert isinstance(state, x.GetTaskResultFailed), state
        assert state.error.message, state


# -- the official clients through the balancer (3 workers) --------------------------------


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_official_python_client_through_the_cluster(mode: str, three: Cluster) -> None:
    """Its legacy run includes an elicitation: a server-to-client request whose answer
    may reach any worker."""
    code, report, stderr = official_py._run_client(
        tooling.official_python(), ["--mode", mode, "--url", three.url]
    )
    assert code == 0 and not report["errors"], (report.get("errors"), stderr[-3000:])
    steps = report["steps"]
    assert steps["call_tool"] == {"isError": False, "texts": [official_py.SIMPLE_TEXT]}
    assert steps["read_resource"]["texts"] == [official_py.STATIC_TEXT]
    if mode == "legacy":
        assert report["protocolVersion"] == "2025-11-25"
        official_py._check_legacy_round(report)
    else:
        assert report["protocolVersion"] == "2026-07-28"


@pytest.mark.needs_node
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_typescript_client_through_the_cluster(mode: str, three: Cluster) -> None:
    config = {
        "nodeModules": str(tooling.npm_package(npm.V2_CLIENT)),
        "transport": "http",
        "mode": mode,
        "timeoutMs": npm.REQUEST_TIMEOUT_MS,
        "url": three.url,
    }
    doc = npm._run_client(tooling.node22(), "npm_client_v2.mjs", config, None)
    npm._check_common(doc)
    if mode == "legacy":
        npm._check_legacy(doc)
    else:
        npm._check_modern(doc, "http")
