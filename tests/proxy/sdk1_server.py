"""A legacy-only upstream: a FastMCP server of the official Python SDK 1.x, over stdio,
with a tool that elicits mid-call (a real `elicitation/create` request). Run by
tests/proxy/test_sdk1_upstream.py with a python that has `mcp==1.27.0` installed."""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

server = FastMCP("sdk1-upstream")


class Person(BaseModel):
    name: str


@server.tool()
async def ask_name(ctx: Context) -> str:  # type: ignore[type-arg]
    """Asks the user for their name, then greets them."""
    answer = await ctx.elicit("What is your name?", schema=Person)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}!"


@server.tool()
def echo(text: str) -> str:
    """Echoes the text."""
    return text


if __name__ == "__main__":
    server.run()
