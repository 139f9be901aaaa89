"""Start-up of a server built from a large OpenAPI document: mcpgen's generated module
(import + register) against FastMCP's run-time `from_openapi`, each in a fresh process.

    python bench/openapi_startup.py mcpgen MODULE.py
    /path/to/fastmcp-venv/bin/python bench/openapi_startup.py fastmcp SPEC.json [TAG]

Prints one JSON line: seconds to a server with its tools listed, tool count, peak RSS.
The figures in docs/guide/openapi.md come from this script.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any


def mcpgen_server(path: str) -> tuple[float, int]:
    from mcpgen import Client, Server  # noqa: PLC0415

    started = time.perf_counter()
    spec = importlib.util.spec_from_file_location("generated_api", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["generated_api"] = module
    spec.loader.exec_module(module)
    server = Server("api", "1.0")
    module.register(server, module.Api("https://api.example.com", module.SCHEMES))

    async def listed() -> int:
        async with Client.memory(server) as client:
            return len(await client.list_tools())

    count = asyncio.run(listed())
    return time.perf_counter() - started, count


def fastmcp_server(path: str, tag: str | None) -> tuple[float, int]:
    from fastmcp import FastMCP  # noqa: PLC0415
    from fastmcp.server.providers.openapi.routing import MCPType, RouteMap  # noqa: PLC0415

    started = time.perf_counter()
    spec: Any = json.loads(Path(path).read_text())
    maps = None
    if tag is not None:
        maps = [RouteMap(tags={tag}, mcp_type=MCPType.TOOL), RouteMap(mcp_type=MCPType.EXCLUDE)]
    server = FastMCP.from_openapi(openapi_spec=spec, route_maps=maps)

    async def listed() -> int:
        return len(await server.list_tools())

    count = asyncio.run(listed())
    return time.perf_counter() - started, count


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "mcpgen":
        seconds, tools = mcpgen_server(path)
    else:
        seconds, tools = fastmcp_server(path, sys.argv[3] if len(sys.argv) > 3 else None)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"server": kind, "seconds": round(seconds, 2), "tools": tools,
                      "rss_mb": round(rss_mb, 1)}))  # fmt: skip
