"""Figures for docs/performance.md: Redis round trips and the latency of a legacy
Streamable HTTP tools/call, on Redis and in memory. The app is driven in-process
(`tests/transports/asgidriver.py`), so the figures are the server's own cost plus
Redis on loopback, without a socket to the client. The stores take turns, in rounds
(on a loaded machine the load changes over a run; each round's ratio is fair).

    .venv/bin/python -m tests.scale.measure [calls]
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import sys
import threading
import time
from typing import Any

import httpx

from mcpgen import Server
from mcpgen.stores.redis import RedisStores
from tests.scale.harness import KEY, fresh_redis_url
from tests.scale.wire import frame, open_session
from tests.stores.redis_server import server as redis_server
from tests.transports.asgidriver import initialize, post, rpc
from tests.transports.httpharness import serve


def build(redis: str | RedisStores | None) -> Server:
    server = Server("measure", state_keys=[KEY], redis=redis)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


class Monitor:
    """Counts the commands clients send to the test redis-server (MONITOR), leaving out
    the ones a Lua script runs: each counted command is one round trip (a pipeline's
    commands count one each, so this is an upper bound)."""

    def __init__(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", redis_server().port))
        self.sock.sendall(b"MONITOR\r\n")
        assert self.sock.recv(16).startswith(b"+OK")
        self.lines: list[str] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        buffer = b""
        self.sock.settimeout(0.2)
        while not self.done.is_set():
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                return
            buffer += chunk
            *complete, buffer = buffer.split(b"\r\n")
            self.lines.extend(line.decode(errors="replace") for line in complete)

    def stop(self) -> list[str]:
        time.sleep(0.3)
        self.done.set()
        self.thread.join(2)
        self.sock.close()
        return [line for line in self.lines if " lua] " not in line and '"' in line]


def heartbeat(command: str) -> bool:
    """Whether a MONITOR line is a session cache's heartbeat (one per worker a quarter
    of the staleness bound, not per request)."""
    return '"PUBLISH"' in command and '"h ' in command


async def legacy_calls(
    server: Server, calls: int, frame: dict[str, Any] | None = None
) -> tuple[list[float], list[str]]:
    """Latency (seconds) of each legacy tools/call (or `frame`) after a warm-up, and
    the Redis commands they ran."""
    app: Any = server.asgi_app()
    session = await initialize(app)
    if frame is None:
        frame = rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    for _ in range(20):  # warm-up: scripts loaded, connections open
        await post(app, session, frame)
    if server.redis is not None:
        await server.redis.sessions.ready()  # the cache's first heartbeat is back
    monitor = Monitor() if server.redis is not None else None
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        status, _, _ = await post(app, session, frame)
        times.append(time.perf_counter() - start)
        assert status == 200
    commands = [] if monitor is None else monitor.stop()
    return times, commands


def main(calls: int = 2000, rounds: int = 5) -> None:
    """In memory, on Redis, and on Redis without the session cache (one round trip a
    call), in turns: `rounds` times `calls / rounds` calls each."""
    each = max(1, calls // rounds)
    names = ["in memory", "redis", "redis, no cache"]
    pooled: dict[str, list[float]] = {name: [] for name in names}
    ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
    trips: dict[str, list[float]] = {name: [] for name in names[1:]}
    beats, beating = 0, 0.0
    for turn in range(rounds):
        medians = {}
        legs = [
            ("in memory", None),
            ("redis", fresh_redis_url()),
            ("redis, no cache", RedisStores.from_url(fresh_redis_url(), session_stale_seconds=0)),
        ]
        for name, redis in legs[turn % 3 :] + legs[: turn % 3]:
            times, commands = asyncio.run(legacy_calls(build(redis), each))
            pooled[name] += times
            medians[name] = statistics.median(times)
            if redis is not None:
                trips[name].append(len([c for c in commands if not heartbeat(c)]) / each)
            if name == "redis":
                beats += len([c for c in commands if heartbeat(c)])
                beating += sum(times)
        for name in names[1:]:
            ratios[name].append(medians[name] / medians["in memory"])
        print(
            f"round {turn + 1}: "
            + ", ".join(f"{name} {medians[name] * 1e6:.0f} us" for name in names)
        )
    for name, times in pooled.items():
        times.sort()
        print(
            f"{name:15} legacy tools/call: median {statistics.median(times) * 1e6:.0f} us, "
            f"p99 {times[int(len(times) * 0.99)] * 1e6:.0f} us"
        )
    for name in names[1:]:
        print(
            f"{name} / in memory: median of rounds {statistics.median(ratios[name]):.2f} "
            f"(min {min(ratios[name]):.2f}, max {max(ratios[name]):.2f}); round trips per "
            f"call {max(trips[name]):.2f}"
        )
    print(f"heartbeats besides: {beats} in {beating:.1f} s of calls")


def over_http(redis: str | None, calls: int) -> tuple[list[float], int]:
    """The same call through uvicorn and an httpx client on loopback."""
    body = frame(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    with serve(build(redis).asgi_app()) as (url, _), httpx.Client() as http:
        session = open_session(http, url, "anyone")
        for _ in range(50):
            http.post(url, content=body, headers=session)
        monitor = Monitor() if redis is not None else None
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            response = http.post(url, content=body, headers=session)
            times.append(time.perf_counter() - start)
            assert response.status_code == 200
        commands = [] if monitor is None else [c for c in monitor.stop() if not heartbeat(c)]
    return times, len(commands)


def main_http(calls: int = 2000) -> None:
    for name, redis in (("in memory", None), ("redis", fresh_redis_url())):
        times, commands = over_http(redis, calls)
        times.sort()
        p99 = times[int(len(times) * 0.99)]
        print(
            f"{name:10} legacy tools/call over HTTP: median "
            f"{statistics.median(times) * 1e6:.0f} us, p99 {p99 * 1e6:.0f} us, "
            f"redis commands per call {commands / calls:.2f}"
        )


def used_memory() -> int:
    with socket.create_connection(("127.0.0.1", redis_server().port)) as sock:
        sock.sendall(b"INFO memory\r\n")
        data = sock.recv(65536)
    line = next(x for x in data.decode().splitlines() if x.startswith("used_memory:"))
    return int(line.split(":")[1])


async def idle_sessions(server: Server, count: int) -> None:
    app: Any = server.asgi_app()
    for _ in range(count):
        await initialize(app)


def session_memory(count: int = 2000) -> None:
    """KiB per idle legacy session: in Redis (used_memory), and in the worker process
    that opened them (tracemalloc: the stored state plus the live half; with Redis, the
    worker's cached copy plus the live half)."""
    url = fresh_redis_url()
    before = used_memory()
    asyncio.run(idle_sessions(build(url), count))
    in_redis = (used_memory() - before) / count / 1024
    in_process = {
        name: process_memory(build(redis), count)
        for name, redis in (("memory store", None), ("redis store", fresh_redis_url()))
    }
    print(
        f"idle legacy session: {in_redis:.2f} KiB in Redis; in process "
        + ", ".join(f"{kib:.2f} KiB with the {name}" for name, kib in in_process.items())
    )


def process_memory(server: Server, count: int) -> float:
    import tracemalloc

    async def held() -> float:
        app: Any = server.asgi_app()
        for _ in range(50):  # warm-up: code objects, connections, the bus
            await initialize(app)
        if server.redis is not None:
            await server.redis.sessions.ready()
        start = tracemalloc.take_snapshot()
        for _ in range(count):
            await initialize(app)
        now = tracemalloc.take_snapshot()
        if server.redis is not None:  # the copies were kept (so they are counted)
            assert server.redis.sessions.cache is not None
            assert len(server.redis.sessions.cache.entries) >= count
        return sum(d.size_diff for d in now.compare_to(start, "filename")) / count / 1024

    tracemalloc.start()
    try:
        return asyncio.run(held())
    finally:
        tracemalloc.stop()


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    main(count)
    main_http(count)
    session_memory()
