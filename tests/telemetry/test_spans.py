"""Spans, metrics and log context of a server and a client with telemetry on, both in
this process (memory transport), in both eras."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from mcpgen import Client, McpError
from mcpgen_types import latest as t
from tests.telemetry.app import build
from tests.telemetry.conftest import Telemetry

ERAS = ("modern", "legacy")
VERSION = {"modern": "2026-07-28", "legacy": "2025-11-25"}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def accept(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"sure": True})


def client(era: str, **options: Any) -> Client:
    server = build(telemetry=True)
    return Client.memory(server, era=era, telemetry=True, on_elicitation=accept, **options)


def named(spans: list[dict[str, Any]], name: str, kind: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"] == name and s["kind"] == kind]


def pair(spans: list[dict[str, Any]], name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one CLIENT span named `name` and the one SERVER span under it."""
    (outer,) = named(spans, name, "CLIENT")
    (inner,) = named(spans, name, "SERVER")
    assert inner["trace_id"] == outer["trace_id"]
    assert inner["parent_id"] == outer["span_id"]
    return outer, inner


@pytest.mark.parametrize("era", ERAS)
def test_tools_resources_prompts(otel: Telemetry, era: str) -> None:
    async def main() -> None:
        async with client(era) as c:
            await c.call_tool("echo", {"text": "hi"})
            await c.read_resource("mem://readme")
            await c.get_prompt("greet", {"name": "Ada"})

    run(main())
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        (call,) = named(spans, "tools/call echo", kind)
        assert call["status"] == "UNSET"
        attrs = call["attributes"]
        assert attrs["mcp.method.name"] == "tools/call"
        assert attrs["gen_ai.tool.name"] == "echo"
        assert attrs["gen_ai.operation.name"] == "execute_tool"
        assert attrs["mcp.protocol.version"] == VERSION[era]
        assert attrs["jsonrpc.request.id"].isdigit()
        assert "error.type" not in attrs
        (read,) = named(spans, "resources/read", kind)
        assert read["attributes"]["mcp.resource.uri"] == "mem://readme"
        (prompt,) = named(spans, "prompts/get greet", kind)
        assert prompt["attributes"]["gen_ai.prompt.name"] == "greet"
        assert "gen_ai.tool.name" not in prompt["attributes"]
    for name in ("tools/call echo", "resources/read", "prompts/get greet"):
        outer, inner = pair(spans, name)
        assert (
            outer["attributes"]["jsonrpc.request.id"] == inner["attributes"]["jsonrpc.request.id"]
        )
    if era == "legacy":  # the handshake and its notification are spans too
        _, init = pair(spans, "initialize")
        assert init["attributes"]["mcp.protocol.version"] == "2025-11-25"
        pair(spans, "notifications/initialized")
    points = otel.metrics()
    for metric in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        found = [
            p for p in points[metric]
            if p.attributes.get("gen_ai.tool.name") == "echo"
            and p.attributes.get("mcp.protocol.version") == VERSION[era]
        ]  # fmt: skip
        assert found and found[0].count >= 1
        assert found[0].attributes["mcp.method.name"] == "tools/call"
        assert "jsonrpc.request.id" not in found[0].attributes  # not a metric attribute


@pytest.mark.parametrize("era", ERAS)
def test_tool_error_and_jsonrpc_error(otel: Telemetry, era: str) -> None:
    async def main() -> None:
        async with client(era) as c:
            result = await c.call_tool("boom", {"secret": "hunter2"})
            assert result.is_error
            with pytest.raises(McpError):
                await c.call_tool("missing", {})

    run(main())
    spans = otel.spans()
    for span in pair(spans, "tools/call boom"):
        assert span["status"] == "ERROR"
        assert span["attributes"]["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in span["attributes"]
    for span in pair(spans, "tools/call missing"):
        assert span["status"] == "ERROR"
        assert span["attributes"]["error.type"] == "-32602"
        assert span["attributes"]["rpc.response.status_code"] == "-32602"
    assert "hunter2" not in json.dumps(spans)  # arguments never reach a span
    errors = [
        p for p in otel.metrics()["mcp.server.operation.duration"]
        if p.attributes.get("gen_ai.tool.name") == "boom"
    ]  # fmt: skip
    assert errors and errors[0].attributes["error.type"] == "tool_error"


def test_mrtr_rounds_are_linked(otel: Telemetry) -> None:
    async def main() -> None:
        async with client("modern") as c:
            result = await c.call_tool("confirm", {"action": "ship"})
            assert result.content[0].text == "accept:ship"

    run(main())
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        first, second = named(spans, "tools/call confirm", kind)
        assert first["links"] == []
        assert second["links"] == [
            {"span_id": first["span_id"], "attributes": {"mcpgen.link": "input_round"}}
        ]


def test_legacy_input_request_is_a_client_span_on_the_server(otel: Telemetry) -> None:
    async def main() -> None:
        async with client("legacy") as c:
            result = await c.call_tool("confirm", {"action": "ship"})
            assert result.content[0].text == "accept:ship"

    run(main())
    spans = otel.spans()
    _, call = pair(spans, "tools/call confirm")
    (asked,) = named(spans, "elicitation/create", "CLIENT")
    assert asked["parent_id"] == call["span_id"]
    assert asked["attributes"]["mcp.method.name"] == "elicitation/create"
    assert asked["attributes"]["jsonrpc.request.id"]
    assert call["status"] == asked["status"] == "UNSET"
    # The client is the receiver of that request: a SERVER span under the server's.
    (answered,) = named(spans, "elicitation/create", "SERVER")
    assert answered["parent_id"] == asked["span_id"]
    assert answered["attributes"]["jsonrpc.request.id"] == asked["attributes"]["jsonrpc.request.id"]


def test_a_task_is_linked_to_the_call_that_made_it(otel: Telemetry) -> None:
    async def main() -> None:
        async with client("modern") as c:
            handle = await c.call_tool("slow", {"seconds": 0.05}, task=True)
            result = await handle.result()
            assert result.content[0].text == "done"

    run(main())
    spans = otel.spans()
    outer, created = pair(spans, "tools/call slow")
    followers = [s for s in spans if s["name"].startswith("tasks/") and s["kind"] == "SERVER"]
    assert followers
    for span in followers:
        assert span["links"] == [
            {"span_id": created["span_id"], "attributes": {"mcpgen.link": "task"}}
        ]
    clients = [s for s in spans if s["name"].startswith("tasks/") and s["kind"] == "CLIENT"]
    assert clients and all(s["links"][0]["span_id"] == outer["span_id"] for s in clients)


@pytest.mark.parametrize("tool", ["nested", "nested_sync"])
def test_handler_spans_nest_under_the_server_span(otel: Telemetry, tool: str) -> None:
    async def main() -> None:
        async with client("modern") as c:
            await c.call_tool(tool, {"text": "x"})

    run(main())
    spans = otel.spans()
    _, call = pair(spans, f"tools/call {tool}")
    (inner,) = [s for s in spans if s["name"] == "inner work"]
    assert inner["parent_id"] == call["span_id"]
    assert inner["trace_id"] == call["trace_id"]


def test_session_durations(otel: Telemetry) -> None:
    def count(name: str) -> int:
        points = otel.metrics().get(name, [])
        return sum(p.count for p in points if p.attributes.get("mcp.protocol.version"))

    before = (count("mcp.server.session.duration"), count("mcp.client.session.duration"))

    async def main() -> None:
        async with client("legacy") as c:
            await c.call_tool("echo", {"text": "hi"})

    run(main())
    after = (count("mcp.server.session.duration"), count("mcp.client.session.duration"))
    assert after == (before[0] + 1, before[1] + 1)
    (point,) = [
        p for p in otel.metrics()["mcp.server.session.duration"]
        if p.attributes == {"mcp.protocol.version": "2025-11-25"}
    ]  # fmt: skip
    assert point.sum > 0


def raw_call(meta: dict[str, Any]) -> bytes:
    params = {
        "name": "echo",
        "arguments": {"text": "x"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            **meta,
        },
    }
    return json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    ).encode()


@pytest.mark.parametrize(
    "traceparent",
    ["garbage", "00-zz-yy-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", 42],
)
def test_a_malformed_traceparent_is_ignored(otel: Telemetry, traceparent: Any) -> None:
    session = build(telemetry=True, sync_workers=0).session()
    reply = json.loads(session.receive(raw_call({"traceparent": traceparent}), _Sink()))  # type: ignore[arg-type]
    assert reply["result"]["content"][0]["text"] == "x"
    (span,) = otel.spans()
    assert span["parent_id"] is None  # a trace of its own
    assert span["name"] == "tools/call echo"


def test_a_traceparent_from_the_peer_is_the_parent(otel: Telemetry) -> None:
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    session = build(telemetry=True, sync_workers=0).session()
    session.receive(raw_call({"traceparent": parent, "tracestate": "k=v"}), _Sink())  # type: ignore[arg-type]
    (span,) = otel.spans()
    assert span["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert span["parent_id"] == "00f067aa0ba902b7"


class _Sink:
    headers = None
    principal = None
    auth = None

    def notify(self, frame: bytes) -> None:
        pass

    request = reply = notify

    def spawn(self, coro: Any) -> Any:
        raise AssertionError("echo is sync and runs at once")


def test_logs_carry_method_and_request_id_not_arguments(
    otel: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        async with client("modern") as c:
            await c.call_tool("boom", {"secret": "hunter2"})

    with caplog.at_level(logging.INFO, logger="mcpgen"):
        run(main())
    (record,) = [r for r in caplog.records if r.name == "mcpgen.server"]
    assert record.mcp_method == "tools/call"  # type: ignore[attr-defined]
    assert record.mcp_request_id.isdigit()  # type: ignore[attr-defined]
    text = caplog.text + json.dumps([vars(r) for r in caplog.records], default=str)
    assert "hunter2" not in text


def test_client_logs_carry_the_server_request_they_answer(
    otel: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    async def refuse(params: Any) -> t.ElicitResult:
        raise RuntimeError("no")

    async def main() -> None:
        server = build(telemetry=True)
        async with Client.memory(server, era="legacy", telemetry=True, on_elicitation=refuse) as c:
            with pytest.raises(McpError):
                await c.call_tool("confirm", {"action": "ship"})

    with caplog.at_level(logging.INFO, logger="mcpgen"):
        run(main())
    (record,) = [r for r in caplog.records if r.name == "mcpgen.client"]
    assert record.mcp_method == "elicitation/create"  # type: ignore[attr-defined]
    assert record.mcp_request_id  # type: ignore[attr-defined]
