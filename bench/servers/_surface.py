"""The benchmark surface as plain data (stdlib only), shared by the official low-level
server and the raw ceilings: the same 100 tool definitions, in the same order, as
``examples/bench_server.py`` lists them (``bench/suite.py`` checks they match).  Also
the command line every server under ``bench/servers`` has (``stdio`` or ``http --host
--port``) and the one uvicorn set-up they all serve HTTP with.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

MODERN_VERSION = "2026-07-28"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SERVER_NAME = "bench"
SERVER_VERSION = "1.0.0"
N_TOOLS = 100


def tool_definitions(*, modern: bool) -> list[dict[str, Any]]:
    """``echo``, ``add`` and ``tool_002`` .. ``tool_099``, as ``tools/list`` lists them.

    ``add`` returns a bare number: its ``outputSchema`` (root not an object) is valid at
    2026-07-28 only, so a legacy listing leaves it out.
    """
    tools: list[dict[str, Any]] = [
        {
            "name": "echo",
            "description": "Echo the text back.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
        {
            "name": "add",
            "description": "Add two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
            **({"outputSchema": {"type": "number"}} if modern else {}),
        },
    ]
    tools += [
        {
            "name": f"tool_{n:03d}",
            "description": f"Benchmark tool number {n}.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "default": 10},
                },
                "required": ["query"],
            },
        }
        for n in range(2, N_TOOLS)
    ]
    return tools


def compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def run_uvicorn(app: Any, host: str, port: int) -> None:
    """Serve ``app`` under one uvicorn worker with the same ``uvicorn.Config`` options as
    mcpgen's ``server.run(transport="http")``."""
    import uvicorn  # noqa: PLC0415 (HTTP only)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        workers=1,
        log_level="warning",
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()


def main(doc: str, stdio: Callable[[], None], http_app: Callable[[str], Any]) -> None:
    """``stdio`` or ``http --host H --port P``: run ``stdio()``, or serve ``http_app(host)``
    with :func:`run_uvicorn`.  ``doc``: the server's module docstring (its first line is
    the ``--help`` description)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        stdio()
    else:
        run_uvicorn(http_app(args.host), args.host, args.port)
