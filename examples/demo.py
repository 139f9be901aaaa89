"""The main job: start the demo server and show a client round trip against it.

    python examples/demo.py            # stdio: the server runs as a subprocess
    python examples/demo.py --http     # Streamable HTTP on a free loopback port
    python examples/demo.py --legacy   # the same through an initialize session

The client probes the server's era, lists its tools, calls one, reads a resource,
gets a prompt, and completes a multi round-trip request: the server asks the user
for input, the client's callback answers, the call completes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcpgen import Client
from mcpgen.types import ElicitResult

SERVER = [sys.executable, str(Path(__file__).resolve().parent / "everything.py")]


async def ask_user(params: Any) -> ElicitResult:
    print(f"   (the server asks: {params.message!r}; the user answers 'Ada')")
    return ElicitResult(action="accept", content={"name": "Ada"})


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*SERVER, "--transport", "http", "--port", str(port)])
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline:
                raise SystemExit("the demo server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def round_trip(client: Client) -> None:
    async with client:
        info = client.server_info or {}
        print(
            f"connected to {info.get('name')} {info.get('version')}: era {client.era}, "
            f"protocol {client.protocol_version}"
        )
        tools = await client.list_tools()
        print(f"-> tools/list: {len(tools)} tools, e.g. {', '.join(t.name for t in tools[:3])}")
        text = (await client.call_tool("test_simple_text")).content[0].text
        print(f"-> tools/call test_simple_text: {text!r}")
        resource = await client.read_resource("test://static-text")
        print(f"-> resources/read test://static-text: {resource.contents[0].text!r}")
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        print(f"-> prompts/get: {prompt.messages[0].content.text!r}")
        tool = (
            "test_input_required_result_elicitation"
            if client.era == "modern"
            else "test_elicitation"
        )
        args = {} if client.era == "modern" else {"message": "What is your name?"}
        answer = (await client.call_tool(tool, args)).content[0].text
        print(f"-> tools/call {tool}: {answer!r}")
    print("round trip complete")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="Streamable HTTP instead of stdio")
    parser.add_argument("--legacy", action="store_true", help="use an initialize session")
    args = parser.parse_args()
    era = "legacy" if args.legacy else "auto"
    if args.http:
        with http_server() as url:
            asyncio.run(round_trip(Client.http(url, era=era, on_elicitation=ask_user)))
    else:
        asyncio.run(
            round_trip(
                Client.stdio([*SERVER, "--transport", "stdio"], era=era, on_elicitation=ask_user)
            )
        )


if __name__ == "__main__":
    main()
