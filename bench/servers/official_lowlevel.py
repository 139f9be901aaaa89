"""The benchmark surface on the official MCP SDK's low-level ``Server``.

    python bench/servers/official_lowlevel.py stdio
    python bench/servers/official_lowlevel.py http --host 127.0.0.1 --port 8000

Run it with the benchmark venv's python (``bench/run.sh`` makes it): the SDK never
enters the project's environment. Same 100 tools as ``examples/bench_server.py``
(definitions from ``_surface.py``, checked identical by ``bench/suite.py``), both eras
(``Server.run`` is the SDK's dual-era loop: a connection's first request picks it).

stdio: ``mcp.server.stdio.stdio_server`` + ``Server.run`` under ``anyio.run`` (asyncio),
the pattern of the SDK's own docstring. HTTP: ``Server.streamable_http_app(
json_response=True)`` (JSON replies, like mcpgen's) under one uvicorn worker with the
same ``uvicorn.Config`` options as mcpgen's ``server.run(transport="http")``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _surface import SERVER_NAME, SERVER_VERSION, tool_definitions


def build() -> Server[Any]:
    def listing(*, modern: bool) -> mcp_types.ListToolsResult:
        tools = [
            mcp_types.Tool.model_validate(d, by_name=False) for d in tool_definitions(modern=modern)
        ]
        return mcp_types.ListToolsResult(tools=tools)

    modern_listing = listing(modern=True)
    legacy_listing = listing(modern=False)

    def text(value: str) -> mcp_types.CallToolResult:
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=value)])

    def echo(args: dict[str, Any]) -> mcp_types.CallToolResult:
        value = args.get("text")
        if not isinstance(value, str):
            raise MCPError(code=mcp_types.INVALID_PARAMS, message="echo needs a string `text`")
        return text(value)

    def lookup(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text(f"{args.get('query', '')}:{args.get('limit', 10)}")

    def add(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text(str(float(args["a"]) + float(args["b"])))

    handlers: dict[str, Callable[[dict[str, Any]], mcp_types.CallToolResult]] = {
        tool.name: lookup for tool in modern_listing.tools
    }
    handlers.update(echo=echo, add=add)

    async def on_list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        return modern_listing if modern else legacy_listing

    async def on_call_tool(
        ctx: Any, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"unknown tool {params.name}")
        return handler(params.arguments or {})

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(server: Server[Any], host: str, port: int) -> None:
    import uvicorn  # noqa: PLC0415 (HTTP only)

    app = server.streamable_http_app(json_response=True, host=host)
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
    server = build()
    if args.transport == "stdio":
        anyio.run(serve_stdio, server)
    else:
        serve_http(server, args.host, args.port)


if __name__ == "__main__":
    main()
