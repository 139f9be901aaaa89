"""A server with every built-in policy, for the policy tests over memory, stdio and
HTTP: `python policy_server.py` (stdio) or `python policy_server.py PORT` (HTTP).

    RequestLog, Visibility(disabled_tags={"beta"}), RateLimit(per_tool limited: burst
    2), ResponseCache(read-only tools, lists, reads), Timeouts(default 5 s, task 0.5 s,
    tool `quick`: 0.3 s), SizeLimit(64 KiB)
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from typing import Any

from mcpgen import Server
from mcpgen.middleware import (
    Rate,
    RateLimit,
    RequestLog,
    ResponseCache,
    SizeLimit,
    Timeouts,
    Visibility,
)
from mcpgen_types import latest as t

READ_ONLY = t.ToolAnnotations(read_only_hint=True)


def build(**stores: Any) -> tuple[Server, dict[str, int]]:
    """The server and its counters (cleanups run, counter calls, reads)."""
    counts = {"cleanups": 0, "counter": 0, "reads": 0}
    visibility = Visibility(disabled_tags={"beta"})
    server = Server(
        "policies",
        middleware=[
            RequestLog(),
            visibility,
            RateLimit(per_tool={"limited": Rate(0.001, burst=2)}, store=stores.get("limits")),
            ResponseCache(ttl=60, store=stores.get("responses")),
            Timeouts(default=5.0, task=0.5),
            SizeLimit(64 * 1024),
        ],
    )

    @server.tool(timeout=0.3)
    async def quick(seconds: float) -> str:
        try:
            await asyncio.sleep(seconds)
        finally:
            counts["cleanups"] += 1
        return "done"

    @server.tool(timeout=0.3)
    def quick_sync(seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    @server.tool
    def cleanups() -> int:
        return counts["cleanups"]

    @server.tool
    def limited() -> str:
        return "ok"

    @server.tool
    def big(size: int) -> str:
        return "x" * size

    @server.tool(annotations=READ_ONLY)
    def counter() -> int:
        counts["counter"] += 1
        return counts["counter"]

    @server.tool
    def bump() -> str:
        server.notify_tools_changed()  # a tool list change: cached tool results go
        return "bumped"

    @server.tool(tags=["beta"])
    def secret() -> str:
        return "hidden"

    @server.tool
    def reveal() -> str:
        visibility.enable_tags("beta")
        return "revealed"

    @server.resource("mem://reads", name="reads")
    def reads() -> str:
        counts["reads"] += 1
        return f"read {counts['reads']}"

    @server.tool
    def touch() -> str:
        server.notify_resource_updated("mem://reads")
        return "touched"

    @server.tool(task="optional")
    async def job(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "job done"

    return server, counts


if __name__ == "__main__":
    # The request log on stderr (the HTTP test reads it from the server's log file).
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s %(message)s")
    logging.getLogger("mcpgen.requests").setLevel(logging.INFO)
    policies, _ = build()
    if len(sys.argv) > 1:
        policies.run("http", port=int(sys.argv[1]))
    else:
        policies.run()
