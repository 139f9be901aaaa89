"""The sans-I/O client core, alone and against the server core (no I/O at all)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import pytest

from mcpgen import ClientError, McpError, ProtocolViolationError
from mcpgen._client import ClientCore, Done, NeedInput, Resend, Retry, RoundTrip, initialize_refused
from mcpgen._server import Pending
from mcpgen_types import latest as t
from tests.server.conftest import build_server
from tests.server.harness import Recorder


def core(**kw: Any) -> ClientCore:
    return ClientCore(t.Implementation(name="c", version="1"), {"elicitation": {}}, **kw)


def test_modern_requests_carry_meta_and_fresh_ids() -> None:
    c = core(log_level="info")
    c.adopt_modern()
    rid1, sent, frame = c.request("tools/call", {"name": "x"}, progress_token="p")
    rid2, _, _ = c.request("tools/list")
    assert rid2 == rid1 + 1
    meta = sent["_meta"]
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": "p",
    }
    assert json.loads(frame)["params"] == sent


def test_legacy_requests_have_no_modern_meta() -> None:
    c = core()
    _, frame = c.initialize()
    assert json.loads(frame)["params"]["protocolVersion"] == "2025-11-25"
    c.on_initialize(
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        }
    )
    assert (c.era, c.version) == ("legacy", "2025-06-18")
    _, sent, frame = c.request("tools/list")
    assert sent == {} and "params" not in json.loads(frame)
    assert c.headers("tools/list", sent) == {"mcp-protocol-version": "2025-06-18"}
    with pytest.raises(ProtocolViolationError, match="unsupported version '2026-07-28'"):
        core().on_initialize({"protocolVersion": "2026-07-28"})


def test_mirrored_headers() -> None:
    c = core()
    c.adopt_modern()
    _, sent, _ = c.request(
        "tools/call",
        {"name": "résumé", "arguments": {"region": " eu", "n": 42, "flag": True, "none": None}},
    )
    headers = c.headers(
        "tools/call",
        sent,
        {
            "region": ("region", "string"),
            "n": ("n", "integer"),
            "flag": ("flag", "boolean"),
            "none": ("none", "string"),
        },
    )
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"] == "=?base64?csOpc3Vtw6k=?="  # non-ASCII goes in Base64
    assert headers["mcp-param-region"] == "=?base64?IGV1?="  # leading space too
    assert (headers["mcp-param-n"], headers["mcp-param-flag"]) == ("42", "true")
    assert "mcp-param-none" not in headers  # null values are not mirrored


@pytest.mark.parametrize(
    ("answer", "status", "era", "version"),
    [
        (
            {
                "error": {
                    "code": -32022,
                    "message": "x",
                    "data": {"supported": ["2026-07-28"], "requested": "x"},
                }
            },
            400,
            "retry",
            "2026-07-28",
        ),
        (
            {
                "error": {
                    "code": -32022,
                    "message": "x",
                    "data": {"supported": ["2025-11-25"], "requested": "x"},
                }
            },
            400,
            "legacy",
            None,
        ),
        ({"error": {"code": -32020, "message": "x"}}, 400, "modern", "2026-07-28"),
        ({"error": {"code": -32601, "message": "x"}}, 404, "modern", "2026-07-28"),
        (
            {"error": {"code": -32601, "message": "x"}},
            None,
            "legacy",
            None,
        ),  # stdio: a legacy server's unknown method
        ({"error": {"code": -32602, "message": "not initialized"}}, None, "legacy", None),
        ({}, 400, "legacy", None),  # a bodiless HTTP 400 (the link raised its status)
        ({}, None, "legacy", None),  # no answer at all (timeout)
    ],
)
def test_probe_verdicts(
    answer: dict[str, Any], status: int | None, era: str, version: str | None
) -> None:
    verdict = core().probe_verdict(error=answer.get("error", {}), http_status=status)
    assert (verdict.era, verdict.version if era != "legacy" else None) == (era, version)


def test_result_typing() -> None:
    c = core()
    legacy_list = c.result(
        "tools/list", {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
    )
    assert (
        isinstance(legacy_list, t.ListToolsResult) and legacy_list.ttl_ms == 0
    )  # absent: treat as stale
    asked = c.result("tools/call", {"resultType": "input_required", "requestState": "s"})
    assert isinstance(asked, t.InputRequiredResult)
    with pytest.raises(ProtocolViolationError, match="may not"):
        c.result("tools/list", {"resultType": "input_required"})
    with pytest.raises(ProtocolViolationError, match="unknown resultType"):
        c.result("tools/call", {"resultType": "mystery", "content": []})


def test_round_trip_state_machine() -> None:
    c = core()
    c.adopt_modern()
    trip = RoundTrip(c, "tools/call", {"name": "x", "arguments": {}}, max_rounds=3)
    rid1, _, _ = trip.request()
    step = trip.on_result(
        {
            "resultType": "input_required",
            "requestState": "opaque=\u00e9",
            "inputRequests": {"k": {"method": "roots/list"}},
        }
    )
    assert isinstance(step, NeedInput) and isinstance(step.requests["k"], t.ListRootsRequest)
    trip.answer({"k": t.ListRootsResult(roots=[])})
    rid2, sent, _ = trip.request()
    assert rid2 != rid1  # every round is a new request
    assert sent["requestState"] == "opaque=\u00e9" and sent["inputResponses"] == {
        "k": {"roots": []}
    }
    assert isinstance(trip.on_result({"resultType": "input_required", "requestState": "s2"}), Retry)
    trip.request()
    with pytest.raises(ClientError, match="after 3 rounds"):
        trip.request()
    done = RoundTrip(c, "tools/call", {"name": "x"}).on_result({"content": []})
    assert isinstance(done, Done) and isinstance(done.result, t.CallToolResult)


def test_core_against_the_server_core_in_memory() -> None:
    """Client core + server core with nothing in between: an MRTR round trip."""
    c = core()
    c.adopt_modern()
    session = build_server().session(Recorder())
    trip = RoundTrip(c, "tools/call", {"name": "confirm", "arguments": {"action": "ship"}})
    for _ in range(3):
        rid, _, frame = trip.request()
        out = session.receive(frame, Recorder())
        if isinstance(out, Pending):  # the sync tool ran in a worker thread
            out = asyncio.run(out.coro)
        assert isinstance(out, bytes)
        incoming = c.classify(out)
        assert incoming.kind == "response" and incoming.id == rid
        step = trip.on_result(incoming.result)
        if isinstance(step, Done):
            break
        assert isinstance(step, NeedInput)
        trip.answer({"ok": t.ElicitResult(action="accept", content={"sure": True})})
    assert isinstance(step, Done)
    assert step.result.content[0].text == "accept:ship:{'sure': True}"
    assert trip.rounds == 2


def test_classify() -> None:
    c = core()
    assert c.classify(b'{"jsonrpc":"2.0","id":1,"result":{}}').kind == "response"
    assert c.classify(b'{"jsonrpc":"2.0","id":1,"method":"ping"}').kind == "request"
    assert (
        c.classify(
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}'
        ).kind
        == "notification"
    )
    assert c.classify(b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}').kind == "error"
    null_id = c.classify(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}')
    assert (null_id.kind, null_id.id) == ("error", None)  # e.g. an HTTP 4xx body
    assert c.classify(b"garbage").kind == "invalid"
    note = c.notification_of(
        c.classify(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')
    )
    assert isinstance(note, t.ToolListChangedNotification)
    assert (
        msgspec.json.encode(note)
        == b'{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}'
    )


@pytest.mark.parametrize(
    ("status", "answered", "refused"),
    [
        (405, False, True),  # a bodiless 405, or an error not addressed to initialize
        (404, False, True),
        (400, False, True),  # e.g. "no session" with a null id
        (400, True, False),  # a JSON-RPC answer to initialize: the server's word
        (500, False, False),  # another failure
        (403, False, False),
        (None, False, False),  # not HTTP at all
    ],
)
def test_when_an_initialize_refusal_points_to_http_sse(
    status: int | None, answered: bool, refused: bool
) -> None:
    assert initialize_refused(status, answered) is refused


def test_errors_the_server_sent_and_breaches() -> None:
    c = core()
    error = c.raise_error({"code": -32602, "message": "bad", "data": {"x": 1}})
    assert isinstance(error, McpError) and (error.code, error.message, error.data) == (
        -32602,
        "bad",
        {"x": 1},
    )
    assert isinstance(c.raise_error({"message": "no code"}), ProtocolViolationError)
    assert isinstance(c.raise_error({"code": "1", "message": "x"}), ProtocolViolationError)
    # an error member that is not an object is no JSON-RPC error: invalid, its id kept
    odd = c.classify(b'{"jsonrpc":"2.0","id":3,"error":"boom"}')
    assert (odd.kind, odd.id) == ("invalid", 3)
    with pytest.raises(ProtocolViolationError, match="not an object"):
        c.result("tools/call", [1, 2])


def test_resend_rules() -> None:
    """proto.RESEND_ONCE: a stale-header refusal of tools/call re-reads the tools; an
    unsupported version switches to one both speak; each once per call."""
    c = core()
    assert c.resend_after("tools/call", {"code": -32020, "message": "x"}) is None  # no era
    c.adopt_modern()
    assert c.resend_after("tools/call", {"code": -32020, "message": "x"}) == Resend(True)
    assert c.resend_after("prompts/get", {"code": -32020, "message": "x"}) is None
    assert c.resend_after("tools/list", {"code": -32602, "message": "x"}) is None
    refused = {"code": -32022, "message": "x", "data": {"supported": ["2025-11-25"]}}
    assert c.resend_after("tools/list", refused) is None  # nothing modern in common
    c.version = "1999-01-01"
    refused["data"] = {"supported": ["2026-07-28", "2025-11-25"]}
    assert c.resend_after("tools/list", refused) == Resend(False)
    assert c.version == "2026-07-28"
    trip = RoundTrip(c, "tools/call", {"name": "x"})
    trip.request()
    assert trip.on_error({"code": -32020, "message": "stale"}) == Resend(refresh_tools=True)
    trip.request()
    assert trip.rounds == 1  # the resend is not a new round
    with pytest.raises(McpError, match="stale") as caught:  # only once
        trip.on_error({"code": -32020, "message": "stale"})
    assert caught.value.code == -32020
