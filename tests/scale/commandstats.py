"""Redis commands per request, from Redis's own counters (`INFO commandstats`, summed
over every master): a bounded number of legacy and of modern tools/call through one
worker (the app driven in-process), the counters read before and after. Figures for
docs/guide/redis-ha.md.

Two counts per request: what the worker sent (`sent`: every command but those a Lua
script ran, i.e. EVALSHA, a pipeline's commands one each, the heartbeats) and what
Redis executed (`executed`: scripts' inner commands included).

    .venv/bin/python -m tests.scale.commandstats [single|cluster] [calls]
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from mcpgen import Server
from mcpgen.stores.redis import RedisStores
from tests.scale.harness import KEY
from tests.stores.redis_ha import command
from tests.transports.asgidriver import initialize, post, rpc

MODERN = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "add",
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL = {"name": "add", "arguments": {"a": 1, "b": 2}}


def build(url: str, cache: bool = True) -> Server:
    redis: Any = url if cache else RedisStores.from_url(url, session_stale_seconds=0)
    server = Server("commandstats", state_keys=[KEY], redis=redis)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    return server


def _stats(port: int) -> dict[str, int]:
    """Calls per command on the Redis at `port`."""
    raw = b""
    for _ in range(3):
        raw = command(port, "INFO", "commandstats", timeout=2.0)
        if raw.count(b"\r\n") > 2:
            break
    out: dict[str, int] = {}
    for line in raw.decode(errors="replace").splitlines():
        if line.startswith("cmdstat_"):
            name, _, fields = line.partition(":")
            calls = fields.split(",")[0].partition("=")[2]
            out[name[len("cmdstat_") :]] = int(calls)
    return out


# Commands a script runs (counted by Redis under their own name) are told apart from
# the worker's own by what the worker sends: scripts, plain commands, heartbeats.
_SCRIPTS = ("evalsha", "eval")


def snapshot(ports: list[int]) -> dict[str, int]:
    total: dict[str, int] = {}
    for port in ports:
        for name, calls in _stats(port).items():
            total[name] = total.get(name, 0) + calls
    return total


def difference(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    names = set(before) | set(after)
    moved = {n: after.get(n, 0) - before.get(n, 0) for n in names}
    return {n: c for n, c in moved.items() if c and n not in ("info", "cluster|nodes")}


async def measure(
    url: str, ports: list[int], calls: int, cache: bool = True
) -> dict[str, tuple[dict[str, int], float]]:
    """The commands Redis counted during `calls` legacy, then `calls` modern tools/call
    (after a warm-up: scripts loaded, connections open, the cache's heartbeat back), and
    the seconds each took (the cache's heartbeats go by time, not by request)."""
    server = build(url, cache)
    app: Any = server.asgi_app()
    session = await initialize(app)
    legacy = rpc(1, "tools/call", CALL)
    modern = rpc(2, "tools/call", {**CALL, "_meta": META})
    for _ in range(20):
        assert (await post(app, session, legacy))[0] == 200
        status, _, body = await post(app, MODERN, modern)
        assert status == 200, body
    assert server.redis is not None
    await server.redis.sessions.ready()
    out = {}
    for name, headers, frame in (("legacy", session, legacy), ("modern", MODERN, modern)):
        before, start = snapshot(ports), time.monotonic()
        for _ in range(calls):
            status, _, body = await post(app, headers, frame)
            assert status == 200, body
        took = time.monotonic() - start
        out[name] = (difference(before, snapshot(ports)), took)
    await server.redis.sessions.aclose()
    return out


def per_request(counted: dict[str, int], calls: int) -> tuple[float, float]:
    """(scripts, executed) per request: the scripts run (EVALSHA) and every command
    Redis executed (a script's inner commands included)."""
    scripts = sum(counted.get(name, 0) for name in _SCRIPTS)
    return scripts / calls, sum(counted.values()) / calls


def main(layout: str = "single", calls: int = 200) -> None:
    from tests.stores import redis_ha
    from tests.stores.redis_server import server as redis_server

    made: Any = None
    if layout == "cluster":
        made = redis_ha.ClusterLayout()
        url, ports = made.url, made.ports
    else:
        single = redis_server()
        url, ports = single.url, [single.port]
    try:
        for cache in (True, False):
            found = asyncio.run(measure(url, ports, calls, cache))
            for name, (counted, took) in found.items():
                scripts, executed = per_request(counted, calls)
                print(
                    f"{layout} {name} tools/call{'' if cache else ' (no session cache)'}: "
                    f"{scripts:.2f} scripts, {executed:.2f} commands executed per call "
                    f"({calls} calls in {took:.2f} s)"
                )
                print("   ", dict(sorted(counted.items())))
    finally:
        if made is not None:
            made.close()


if __name__ == "__main__":
    main(*sys.argv[1:2], *[int(a) for a in sys.argv[2:3]])
