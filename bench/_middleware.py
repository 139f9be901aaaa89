"""The server ``bench/middleware_cost.py`` measures: ``echo(text: str) -> str``
(``threaded=False``), as in ``bench/_telemetry.py``, with the middleware a mode names.

    python bench/_middleware.py mcpgen MODE [PORT]     (no PORT: stdio)

MODE:
- ``none``: no middleware (the path every server without middleware takes).
- ``passthrough``: one middleware whose ``on_request`` awaits ``call_next`` and returns.
- ``passthrough-inline``: the same, declared ``inline = True`` (no task of its own).
- ``passthrough-tool``: one middleware overriding ``on_call_tool`` only, likewise.
- ``none-async``, ``timeouts-async``: ``echo`` as an async function (a request with a
  task of its own), without middleware and with ``Timeouts(default=60.0)`` applied.
- ``timeouts``, ``ratelimit``, ``cache``, ``sizelimit``, ``logging``, ``visibility``:
  one built-in policy of ``mcpgen.middleware`` (in memory), set so that it never refuses.
"""

from __future__ import annotations

import sys
from typing import Any

# ruff: noqa: PLC0415

MODES = (
    "none",
    "passthrough",
    "passthrough-inline",
    "passthrough-tool",
    "timeouts",
    "ratelimit",
    "cache",
    "sizelimit",
    "logging",
    "visibility",
    "none-async",
    "timeouts-async",
)


def middleware(mode: str) -> list[Any]:
    from mcpgen import Middleware

    class PassThrough(Middleware):
        async def on_request(self, ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

    class Inline(PassThrough):
        inline = True

    class PassThroughTool(Middleware):
        async def on_call_tool(self, ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

    if mode in ("none", "none-async"):
        return []
    if mode == "passthrough":
        return [PassThrough()]
    if mode == "passthrough-inline":
        return [Inline()]
    if mode == "passthrough-tool":
        return [PassThroughTool()]
    from mcpgen import middleware as mw

    if mode in ("timeouts", "timeouts-async"):
        return [mw.Timeouts(default=60.0)]
    if mode == "ratelimit":
        return [mw.RateLimit(per_caller=mw.Rate(1e9, burst=1e9))]
    if mode == "cache":
        return [mw.ResponseCache(ttl=60.0)]
    if mode == "sizelimit":
        return [mw.SizeLimit(max_bytes=1 << 20)]
    if mode == "logging":
        return [mw.RequestLog()]
    if mode == "visibility":
        return [mw.Visibility()]
    raise SystemExit(f"unknown mode {mode!r}")


def main() -> None:
    from mcpgen import Server

    mode = sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) > 3 else None
    server = Server("bench", "1.0.0", middleware=middleware(mode))

    if mode.endswith("-async"):

        @server.tool
        async def echo(text: str) -> str:
            return text

    else:

        @server.tool(threaded=False)
        def echo(text: str) -> str:
            return text

    if port is None:
        server.run()
    else:
        server.run("http", port=port)


if __name__ == "__main__":
    main()
