"""Call the await-style tools of tests/server/await_server.py with the official Python
MCP SDK's client (PyPI `mcp`) and report the answers.

Runs under the interpreter from `tests.tooling.official_python()`, never inside the
test process:

    python official_await_client.py --mode MODE -- python -m tests.server.await_server

MODE is `legacy` (initialize handshake: the server's awaits are real server-to-client
requests) or `2026-07-28` (each await is an input-required round the client fulfils and
retries). The client's callbacks answer a name, an age, a completion and two roots,
and record what they were asked. One JSON document goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client

OVERALL_TIMEOUT = 90.0
READ_TIMEOUT = 30.0


async def run(mode: str, command: list[str], report: dict[str, Any]) -> None:
    asked: list[str] = report["asked"]

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.append(params.message)
        content = {"name": "Ada"} if "name" in params.message else {"age": 36}
        return types.ElicitResult(action="accept", content=content)

    async def on_sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="hi"), model="m"
        )

    async def on_roots(context: ClientRequestContext) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/ada")])

    params = StdioServerParameters(command=command[0], args=command[1:])
    client = Client(
        stdio_client(params, errlog=sys.stderr),
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        list_roots_callback=on_roots,
        read_timeout_seconds=READ_TIMEOUT,
        client_info=types.Implementation(name="official-await-interop", version="0"),
    )
    async with client:
        report["protocolVersion"] = client.protocol_version
        for tool in ("two_questions", "all_kinds"):
            result = await client.call_tool(tool, {"tag": f"official-{mode}-{tool}"})
            report["results"][tool] = {
                "isError": bool(result.is_error),
                "texts": [block.text for block in result.content if block.type == "text"],
            }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", required=True, help="legacy or a modern version")
    parser.add_argument("command", nargs="+", help="the stdio server command (after --)")
    args = parser.parse_args()
    report: dict[str, Any] = {"mode": args.mode, "asked": [], "results": {}, "errors": {}}
    # Whatever the SDK prints must not corrupt the JSON document.
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:

        async def bounded() -> None:
            with anyio.fail_after(OVERALL_TIMEOUT):
                await run(args.mode, args.command, report)

        anyio.run(bounded)
    except BaseException:
        report["errors"]["fatal"] = traceback.format_exc()
    finally:
        sys.stdout = stdout
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return 0 if not report["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
