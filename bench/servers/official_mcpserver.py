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

import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _surface

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


def main() -> None:
    def http_app(host: str) -> Any:
        return mcp.streamable_http_app(json_response=True, host=host)

    _surface.main(__doc__, stdio=mcp.run, http_app=http_app)


if __name__ == "__main__":
    main()
