"""The official Python SDK's client (under `tests.tooling.official_python()`) against an
mcpgen MCP Apps server over stdio: prints one JSON line with what it saw of the tools'
`_meta.ui` and of the app resource.

    python official_apps_client.py PYTHON SERVER_SCRIPT
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(python: str, script: str) -> None:
    params = StdioServerParameters(command=python, args=[script])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        metas = {tool.name: tool.meta for tool in tools}
        uri = metas["list_products"]["ui"]["resourceUri"]
        contents = (await session.read_resource(uri)).contents[0]
        listed = {str(r.uri): r.mime_type for r in (await session.list_resources()).resources}
        print(
            json.dumps(
                {
                    "tools": metas,
                    "uri": str(contents.uri),
                    "mimeType": contents.mime_type,
                    "meta": contents.meta,
                    "isHtml": contents.text.lstrip().lower().startswith("<!doctype html>"),
                    "listed": listed,
                }
            )
        )


asyncio.run(main(sys.argv[1], sys.argv[2]))
