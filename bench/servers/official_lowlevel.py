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
import _surface
from _surface import SERVER_NAME, SERVER_VERSION, tool_definitions


def listing(definitions: list[dict[str, Any]]) -> mcp_types.ListToolsResult:
    """A ``ListToolsResult`` of tool definitions as ``tools/list`` lists them."""
    tools = [mcp_types.Tool.model_validate(d, by_name=False) for d in definitions]
    return mcp_types.ListToolsResult(tools=tools)


def query_limit(args: dict[str, Any]) -> str:
    """What ``tool_NNN`` answers: ``query:limit``."""
    return f"{args.get('query', '')}:{args.get('limit', 10)}"


def make_server(
    modern_listing: mcp_types.ListToolsResult,
    legacy_listing: mcp_types.ListToolsResult,
    *,
    version: str = SERVER_VERSION,
    lookup: Callable[[dict[str, Any]], str] = query_limit,
) -> Server[Any]:
    """A low-level ``Server`` with the benchmark's tools (also built by ``bench/dispatch.py``
    and ``bench/client.py``, from mcpgen's own listings).

    ``on_list_tools`` answers the prebuilt listing of the connection's era;
    ``on_call_tool`` looks the tool up in a dict: ``echo`` returns its text (a string, or
    an error), ``add`` the sum, every other listed tool the text ``lookup`` makes of its
    arguments.
    """

    def text(value: str) -> mcp_types.CallToolResult:
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=value)])

    def echo(args: dict[str, Any]) -> mcp_types.CallToolResult:
        value = args.get("text")
        if not isinstance(value, str):
            raise MCPError(code=mcp_types.INVALID_PARAMS, message="echo needs a string `text`")
        return text(value)

    def lookup_tool(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text(lookup(args))

    def add(args: dict[str, Any]) -> mcp_types.CallToolResult:
        return text(str(float(args["a"]) + float(args["b"])))

    handlers: dict[str, Callable[[dict[str, Any]], mcp_types.CallToolResult]] = {
        tool.name: lookup_tool for tool in modern_listing.tools
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
        version=version,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def build() -> Server[Any]:
    return make_server(
        listing(tool_definitions(modern=True)), listing(tool_definitions(modern=False))
    )


async def serve_stdio(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    _surface.main(
        __doc__,
        stdio=lambda: anyio.run(serve_stdio, build()),
        http_app=lambda host: build().streamable_http_app(json_response=True, host=host),
    )


if __name__ == "__main__":
    main()
