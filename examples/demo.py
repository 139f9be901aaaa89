"""The main job: start the demo server and show a client round trip against it.

    python examples/demo.py            # stdio: the server runs as a subprocess
    python examples/demo.py --http     # Streamable HTTP on a free loopback port

It discovers the server, lists its tools, calls one, reads a resource, gets a prompt
and completes one multi round-trip request (the server asks for input, the client
answers and retries), printing each exchange.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "mcpgen-demo", "version": "1"},
}
NAME_OF = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@contextlib.contextmanager
def stdio_server() -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    cmd = [sys.executable, str(HERE / "everything.py"), "--transport", "stdio"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(message: dict[str, Any]) -> dict[str, Any]:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        while True:
            reply = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            if reply.get("id") == message["id"]:
                return reply  # type: ignore[no-any-return]

    try:
        yield send
    finally:
        proc.stdin.close()
        proc.wait(10)


@contextlib.contextmanager
def http_server() -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, str(HERE / "everything.py"), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while True:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.2),
        ):
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the demo server did not start")
        time.sleep(0.05)

    def send(message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
        }
        if method in NAME_OF:
            headers["mcp-name"] = message["params"][NAME_OF[method]]
        request = urllib.request.Request(url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    try:
        yield send
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="use Streamable HTTP instead of stdio")
    args = parser.parse_args()
    ids = iter(range(1, 100))

    with http_server() if args.http else stdio_server() as send:

        def call(method: str, **params: Any) -> dict[str, Any]:
            message = {
                "jsonrpc": "2.0",
                "id": next(ids),
                "method": method,
                "params": {**params, "_meta": META},
            }
            reply = send(message)
            shown = json.dumps(reply.get("result", reply.get("error")))
            more = "..." if len(shown) > 150 else ""
            print(f"-> {method} {json.dumps(params)[:70]}\n<- {shown[:150]}{more}")
            if "error" in reply:
                raise SystemExit(f"{method} failed: {reply['error']}")
            return reply["result"]  # type: ignore[no-any-return]

        transport = "Streamable HTTP" if args.http else "stdio"
        print(f"demo: mcpgen server over {transport}, protocol 2026-07-28\n")
        info = call("server/discover")
        tools = call("tools/list")["tools"]
        name = info["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
        print(f"   {name}: {len(tools)} tools\n")
        call("tools/call", name="test_simple_text", arguments={})
        call("resources/read", uri="test://static-text")
        call("prompts/get", name="test_prompt_with_arguments", arguments={"arg1": "a", "arg2": "b"})
        first = call("tools/call", name="test_input_required_result_elicitation", arguments={})
        answer = {"user_name": {"action": "accept", "content": {"name": "Ada"}}}
        done = call(
            "tools/call",
            name="test_input_required_result_elicitation",
            arguments={},
            inputResponses=answer,
            requestState=first["requestState"],
        )
        print(f"\ndemo: round trip complete: {done['content'][0]['text']}")


if __name__ == "__main__":
    main()
