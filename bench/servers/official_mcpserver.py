"""The benchmark surface on the official MCP SDK's high-level ``MCPServer``.

    python bench/servers/official_mcpserver.py stdio
    python bench/servers/official_mcpserver.py http --host 127.0.0.1 --port 8000

Run it with the benchmark venv's python (``bench/run.sh`` makes it). Tools are plain
typed functions, as a user of the SDK writes them: ``echo(text: str) -> str``,
``add(a: float, b: float) -> float`` and ``tool_002`` .. ``tool_099`` ``(query: str,
limit: int = 10) -> str``. ``echo`` and the ``tool_NNN`` use ``structured_output=False``
so that their replies carry the same content as mcpgen's (text only, no
``structuredContent``); the SDK derives the input schemas itself (pydantic), so its
listing differs from mcpgen's in detail (titles), not in tools.

stdio: ``MCPServer.run()`` (``anyio.run`` of ``run_stdio_async``). HTTP:
``MCPServer.streamable_http_app(json_response=True)`` under one uvicorn worker with the
same ``uvicorn.Config`` options as mcpgen's ``server.run(transport="http")``.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench", version="1.0.0")


@mcp.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def _make(n: int) -> None:
    def tool(query: str, limit: int = 10) -> str:
        return f"{query}:{limit}"

    mcp.add_tool(
        tool,
        name=f"tool_{n:03d}",
        description=f"Benchmark tool number {n}.",
        structured_output=False,
    )


for _n in range(2, 100):
    _make(_n)


def serve_http(host: str, port: int) -> None:
    import uvicorn  # noqa: PLC0415 (HTTP only)

    app: Any = mcp.streamable_http_app(json_response=True, host=host)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        mcp.run()
    else:
        serve_http(args.host, args.port)


if __name__ == "__main__":
    main()
