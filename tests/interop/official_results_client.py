"""Call every tool of one server with the official Python MCP SDK's client (PyPI `mcp`)
and report what it made of each result.

Runs under the interpreter from `tests.tooling.official_python()`, never inside the
test process:

    python official_results_client.py --mode MODE -- python -m tests.server.output_matrix

MODE is `legacy` (initialize handshake) or `2026-07-28` (adopted directly). The client
lists the tools, then calls each without arguments; its `call_tool` checks a result
against the tool's output schema and raises when structured content is missing or does
not match. One JSON document goes to stdout: per tool, the outputSchema listed and
either the result (structuredContent, content block types, isError) or the error the
client raised. Judging them is left to the test.
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
from mcp.client.stdio import StdioServerParameters, stdio_client

OVERALL_TIMEOUT = 90.0
READ_TIMEOUT = 30.0


async def run(mode: str, command: list[str], report: dict[str, Any]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    client = Client(
        stdio_client(params, errlog=sys.stderr),
        mode=mode,
        read_timeout_seconds=READ_TIMEOUT,
        client_info=types.Implementation(name="official-results-interop", version="0"),
    )
    async with client:
        report["protocolVersion"] = client.protocol_version
        listing = await client.list_tools()
        for tool in listing.tools:
            entry: dict[str, Any] = {"outputSchema": tool.output_schema}
            report["tools"][tool.name] = entry
            try:
                result = await client.call_tool(tool.name, {})
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
                entry["traceback"] = traceback.format_exc()[-2000:]
                continue
            if "structured_content" in result.model_fields_set:
                entry["structuredContent"] = result.structured_content
            entry["content"] = [block.type for block in result.content]
            entry["isError"] = bool(result.is_error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", required=True, help="legacy or a modern version")
    parser.add_argument("command", nargs="+", help="the stdio server command (after --)")
    args = parser.parse_args()
    report: dict[str, Any] = {"mode": args.mode, "tools": {}, "errors": {}}
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
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
