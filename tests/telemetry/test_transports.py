"""Telemetry over the real transports: stdio (the server a subprocess exporting its
spans to a file), Streamable HTTP and HTTP+SSE (uvicorn in a thread of this process).
Client and server spans share one trace through `params._meta`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client
from tests.telemetry.app import build
from tests.telemetry.conftest import Telemetry
from tests.telemetry.test_spans import accept, named
from tests.transports.httpharness import serve

APP = Path(__file__).with_name("app.py")
VERSION = {"modern": "2026-07-28", "legacy": "2025-11-25"}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def exercise(c: Client, era: str) -> None:
    assert c.era == era
    await c.call_tool("echo", {"text": "hi"})
    await c.read_resource("mem://readme")
    await c.get_prompt("greet", {"name": "Ada"})
    assert (await c.call_tool("boom", {"secret": "s"})).is_error
    assert (await c.call_tool("confirm", {"action": "go"})).content[0].text == "accept:go"


def check(client_spans: list[dict[str, Any]], server_spans: list[dict[str, Any]], era: str) -> None:
    for name in ("tools/call echo", "resources/read", "prompts/get greet", "tools/call boom"):
        (outer,) = named(client_spans, name, "CLIENT")
        (inner,) = named(server_spans, name, "SERVER")
        assert inner["trace_id"] == outer["trace_id"], name
        assert inner["parent_id"] == outer["span_id"], name
        for span in (outer, inner):
            assert span["attributes"]["mcp.protocol.version"] == VERSION[era]
    (boom,) = named(server_spans, "tools/call boom", "SERVER")
    assert boom["attributes"]["error.type"] == "tool_error"
    confirms = named(server_spans, "tools/call confirm", "SERVER")
    if era == "modern":  # two rounds, the second linked to the first
        assert confirms[1]["links"][0]["span_id"] == confirms[0]["span_id"]
    else:  # the server asked the client in the session
        (asked,) = named(server_spans, "elicitation/create", "CLIENT")
        assert asked["parent_id"] == confirms[0]["span_id"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_stdio(otel: Telemetry, tmp_path: Path, era: str) -> None:
    exported = tmp_path / "spans.jsonl"

    async def main() -> None:
        command = [sys.executable, str(APP), str(exported)]
        async with Client.stdio(command, era=era, telemetry=True, on_elicitation=accept) as c:
            await exercise(c, era)

    run(main())
    server_spans = [json.loads(line) for line in exported.read_text().splitlines()]
    check(otel.spans(), server_spans, era)
    (call,) = named(server_spans, "tools/call echo", "SERVER")
    assert "mcp.session.id" not in call["attributes"]  # stdio has no session id


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_streamable_http(otel: Telemetry, era: str) -> None:
    with serve(build(telemetry=True).asgi_app()) as (url, _):

        async def main() -> str | None:
            async with Client.http(url, era=era, telemetry=True, on_elicitation=accept) as c:
                await exercise(c, era)
                return getattr(c.link, "session_id", None)

        session_id = run(main())
    spans = otel.spans()
    check(spans, spans, era)
    for kind in ("CLIENT", "SERVER"):
        (call,) = named(spans, "tools/call echo", kind)
        assert call["attributes"]["network.transport"] == "tcp"
        if era == "legacy":
            assert session_id and call["attributes"]["mcp.session.id"] == session_id
        else:
            assert "mcp.session.id" not in call["attributes"]


def test_http_sse(otel: Telemetry) -> None:
    with serve(build(telemetry=True).asgi_app()) as (url, _):

        async def main() -> None:
            sse = url.removesuffix("/mcp") + "/sse"
            async with Client.sse(sse, telemetry=True, on_elicitation=accept) as c:
                await exercise(c, "legacy")

        run(main())
    spans = otel.spans()
    check(spans, spans, "legacy")
