"""What the proxy tests share: the upstream they mirror (examples/everything.py over
stdio), the `mcpgen` command beside this interpreter, the eras, and what a client
reads or hears through a proxy."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from mcpgen import Client
from mcpgen_types import latest as t
from tests.processes import EVERYTHING

ERAS = ["legacy", "modern"]
UPSTREAM = [sys.executable, str(EVERYTHING), "--transport", "stdio"]
MCPGEN = str(Path(sys.executable).with_name("mcpgen"))


def text(result: t.CallToolResult) -> str:
    """The text of a result's first content block (which must be text)."""
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def list_changes(client: Client, *tools: str) -> list[str]:
    """The kinds of the first two list changes the client hears (tools or prompts)
    while `tools`, which change the upstream's lists, are called."""
    heard: list[str] = []

    async def listen() -> None:
        async for note in client.listen(tools=True, prompts=True):
            heard.append(type(note).__struct_config__.tag)  # type: ignore[attr-defined]
            if len(heard) == 2:
                return

    listener = asyncio.ensure_future(listen())
    await asyncio.sleep(0.3)  # the listen stream is open
    for name in tools:
        await client.call_tool(name)
    await asyncio.wait_for(listener, 10)
    return heard
