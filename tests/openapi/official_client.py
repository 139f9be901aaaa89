"""The official Python SDK's client (under `tests.tooling.official_python()`) against a
server built from a generated OpenAPI module, over stdio: prints one JSON line of what
it saw.

    python official_client.py PYTHON SERVER_SCRIPT
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
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        page = await session.call_tool("list_items", {"category": "tools", "limit": 3})
        missing = await session.call_tool("get_item", {"item_id": 404})
        print(
            json.dumps(
                {
                    "tools": sorted(tools),
                    "readOnly": tools["list_items"].annotations.read_only_hint,
                    "page": page.structured_content,
                    "missingError": missing.is_error,
                    "missingText": missing.content[0].text,
                }
            )
        )


asyncio.run(main(sys.argv[1], sys.argv[2]))
