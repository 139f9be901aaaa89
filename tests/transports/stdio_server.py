"""A small server for the stdio transport tests (run as a subprocess)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcpgen import Context, InputRequired, Server, elicit_form
from mcpgen.transports import serve_stdio

server = Server("stdio-test", "1.0")


@server.tool
def echo(text: str) -> str:
    return text


@server.tool
def noisy(text: str) -> str:
    print("stray print from a handler")  # must not reach the protocol stream
    sys.stdout.write("and a stray write\n")
    return text


@server.tool
async def slow(ctx: Context, seconds: float = 30.0) -> str:
    sys.stderr.write("slow: started\n")
    sys.stderr.flush()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        sys.stderr.write("slow: cancelled\n")
        raise
    return "slow done"


@server.tool
def ask(ctx: Context) -> Any:
    answer = ctx.input("q")
    if answer is None:
        return InputRequired({"q": elicit_form("Name?", {"type": "object", "properties": {}})})
    return f"got {answer.action}"


if __name__ == "__main__":
    max_line = int(sys.argv[1]) if len(sys.argv) > 1 else 4 * 1024 * 1024
    asyncio.run(serve_stdio(server, max_line=max_line))
