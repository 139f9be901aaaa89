"""Drive the official Python MCP SDK's client (PyPI `mcp`) against one server.

Runs under the interpreter from `tests.tooling.official_python()` (a venv holding the
official SDK and not mcpgen), never inside the test process:

    python official_python_client.py --mode MODE --url http://127.0.0.1:PORT/mcp
    python official_python_client.py --mode legacy --sse http://127.0.0.1:PORT/sse
    python official_python_client.py --mode MODE --stdio -- python examples/everything.py ...

MODE is `legacy` (initialize handshake), `2026-07-28` (adopted directly: no handshake,
per-request `_meta`) or `auto` (`server/discover` probe, falling back to initialize).
`--sse` uses the SDK's client of the deprecated 2024-11-05 HTTP+SSE transport.

It connects, lists tools, calls `test_simple_text`, reads `test://static-text`, gets
`test_prompt_with_arguments`, and completes one input round (an input-required round
trip on a modern connection, a server-to-client `elicitation/create` on a legacy one),
answered by the client's elicitation callback. Every message crossing the transport is
tapped. The findings are one JSON document on stdout (nothing else is written there);
the exit status is 0 when every step ran without raising, else 1. Judging the values
is left to the test.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import PROTOCOL_VERSION_META_KEY

OVERALL_TIMEOUT = 90.0
READ_TIMEOUT = 30.0
PROMPT_ARGS = {"arg1": "first-value", "arg2": "second-value"}
WIRE_LIMIT = 4000


def _summary(direction: str, item: SessionMessage | Exception) -> dict[str, Any]:
    """A compact, JSON-able record of one message crossing the transport."""
    if isinstance(item, Exception):
        return {"dir": direction, "exception": repr(item)}
    raw: dict[str, Any] = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    entry: dict[str, Any] = {"dir": direction}
    for key in ("id", "method"):
        if key in raw:
            entry[key] = raw[key]
    params = raw.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta:
            entry["metaProtocolVersion"] = meta[PROTOCOL_VERSION_META_KEY]
        for key in ("name", "uri", "protocolVersion"):
            if key in params:
                entry[key] = params[key]
        if "inputResponses" in params:
            entry["inputResponses"] = params["inputResponses"]
        if "requestState" in params:
            entry["hasRequestState"] = True
    result = raw.get("result")
    if isinstance(result, dict):
        entry["result"] = _result_summary(result)
    if "error" in raw:
        entry["error"] = raw["error"]
    metadata = item.metadata
    if isinstance(metadata, ClientMessageMetadata) and metadata.headers:
        entry["headers"] = dict(metadata.headers)
    return entry


def _result_summary(result: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("resultType", "protocolVersion", "supportedVersions", "isError", "action"):
        if key in result:
            out[key] = result[key]
    if "inputRequests" in result:
        out["inputRequests"] = result["inputRequests"]
    if "requestState" in result:
        out["hasRequestState"] = True
    if isinstance(result.get("content"), list):
        out["content"] = result["content"]
    if isinstance(result.get("tools"), list):
        out["tools"] = len(result["tools"])
    return out


class _Tap:
    """One of the transport's streams, recording what passes into `wire`."""

    def __init__(self, inner: Any, wire: list[dict[str, Any]]) -> None:
        self._inner = inner
        self._wire = wire

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class _TapRead(_Tap):
    """The transport's read stream, recording everything received."""

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        self._wire.append(_summary("recv", item))
        return item

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None


class _TapWrite(_Tap):
    """The transport's write stream, recording everything sent."""

    async def send(self, item: SessionMessage, /) -> None:
        self._wire.append(_summary("send", item))
        await self._inner.send(item)


class TappedTransport:
    """Wraps one of the SDK's own transports; the streams it yields record the wire."""

    def __init__(self, inner: AbstractAsyncContextManager[Any], wire: list[dict[str, Any]]) -> None:
        self._inner = inner
        self._wire = wire

    async def __aenter__(self) -> tuple[_TapRead, _TapWrite]:
        read_stream, write_stream = await self._inner.__aenter__()
        return _TapRead(read_stream, self._wire), _TapWrite(write_stream, self._wire)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


def _texts(content: list[Any]) -> list[str]:
    return [block.text for block in content if isinstance(block, types.TextContent)]


def _answer(schema: dict[str, Any]) -> dict[str, Any]:
    """Form content matching what the server asked for."""
    properties = schema.get("properties") or {}
    if "name" in properties:
        return {"name": "Alice"}
    if "username" in properties:
        return {"username": "alice", "email": "alice@example.com"}
    return {}


async def run(
    mode: str, transport: AbstractAsyncContextManager[Any], report: dict[str, Any]
) -> None:
    """Fill `report` as the steps go, so a timeout still leaves what was found so far."""
    wire: list[dict[str, Any]] = report["wire"]

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        schema: dict[str, Any] = {}
        if isinstance(params, types.ElicitRequestFormParams):
            requested: Any = params.requested_schema
            schema = requested if isinstance(requested, dict) else requested.model_dump()
        content = _answer(schema)
        report["elicitations"].append(
            {
                "requestId": context.request_id,
                "message": params.message,
                "schemaProperties": sorted(schema.get("properties") or {}),
                "answered": content,
            }
        )
        return types.ElicitResult(action="accept", content=content)

    client = Client(
        TappedTransport(transport, wire),
        mode=mode,
        elicitation_callback=on_elicit,
        read_timeout_seconds=READ_TIMEOUT,
        client_info=types.Implementation(name="official-python-interop", version="0"),
    )

    async def step(name: str, body: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            report["steps"][name] = await body()
        except Exception:
            report["errors"][name] = traceback.format_exc()

    try:
        async with client:
            session = client.session
            report["protocolVersion"] = client.protocol_version
            report["era"] = "modern" if session.discover_result is not None else "legacy"
            if session.initialize_result is not None:
                report["handshake"] = "initialize"
            elif any(m.get("method") == "server/discover" for m in wire):
                report["handshake"] = "discover"
            else:
                report["handshake"] = "adopt"  # a pinned version: no wire traffic at all
            info = client.server_info
            report["serverInfo"] = (
                None if info is None else {"name": info.name, "version": info.version}
            )

            async def list_tools() -> dict[str, Any]:
                listing = await client.list_tools()
                return {"tools": sorted(tool.name for tool in listing.tools)}

            async def call_tool() -> dict[str, Any]:
                result = await client.call_tool("test_simple_text", {})
                return {"isError": bool(result.is_error), "texts": _texts(result.content)}

            async def read_resource() -> dict[str, Any]:
                result = await client.read_resource("test://static-text")
                texts = [
                    c.text for c in result.contents if isinstance(c, types.TextResourceContents)
                ]
                return {"uris": [str(c.uri) for c in result.contents], "texts": texts}

            async def get_prompt() -> dict[str, Any]:
                result = await client.get_prompt("test_prompt_with_arguments", PROMPT_ARGS)
                return {
                    "args": PROMPT_ARGS,
                    "texts": _texts([m.content for m in result.messages]),
                }

            async def input_round() -> dict[str, Any]:
                # Client.call_tool fulfils an input-required result itself: it runs the
                # embedded requests through the same callbacks that answer legacy
                # server-to-client requests, then retries with inputResponses.
                if report["era"] == "modern":
                    tool, arguments = "test_input_required_result_elicitation", {}
                else:
                    tool = "test_elicitation"
                    arguments = {"message": "Please provide your information"}
                result = await client.call_tool(tool, arguments)
                return {
                    "tool": tool,
                    "isError": bool(result.is_error),
                    "texts": _texts(result.content),
                }

            await step("list_tools", list_tools)
            await step("call_tool", call_tool)
            await step("read_resource", read_resource)
            await step("get_prompt", get_prompt)
            await step("input_round", input_round)
    except Exception:
        report["errors"]["connection"] = traceback.format_exc()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", required=True, help="legacy, auto or a modern version")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="a Streamable HTTP endpoint")
    target.add_argument("--sse", help="the SSE endpoint of the 2024-11-05 HTTP+SSE transport")
    target.add_argument("--stdio", action="store_true", help="launch the command after --")
    parser.add_argument("command", nargs="*", help="the stdio server command (after --)")
    args = parser.parse_args()

    if args.stdio:
        if not args.command:
            parser.error("--stdio needs a server command after --")
        params = StdioServerParameters(command=args.command[0], args=args.command[1:])
        transport: AbstractAsyncContextManager[Any] = stdio_client(params, errlog=sys.stderr)
    elif args.sse:
        transport = sse_client(args.sse, sse_read_timeout=READ_TIMEOUT)
    else:
        transport = streamable_http_client(args.url)
    report: dict[str, Any] = {
        "transport": "stdio" if args.stdio else "sse" if args.sse else "http",
        "mode": args.mode,
        "steps": {},
        "elicitations": [],
        "errors": {},
        "wire": [],
    }

    # Whatever the SDK or a callback prints must not corrupt the JSON document.
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:

        async def bounded() -> None:
            with anyio.fail_after(OVERALL_TIMEOUT):
                await run(args.mode, transport, report)

        anyio.run(bounded)
    except BaseException:
        report["errors"]["fatal"] = traceback.format_exc()
    finally:
        sys.stdout = stdout
    report["wire"] = report["wire"][:WIRE_LIMIT]
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return 1 if report.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
