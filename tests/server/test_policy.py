"""Era and error-code policy, table-driven: one inbound line, one expected outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpgen._jsonrpc import ErrorFrame
from tests.server.harness import Client, Recorder, meta, request

V = "2026-07-28"


def raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# (case, line, expected code or None for a result, expected HTTP status, id echoed)
CASES: list[tuple[str, bytes, int | None, int, Any]] = [
    ("not json", b"{nope", -32700, 400, None),
    ("json but not an object", b'"hello"', -32600, 400, None),
    ("id null", raw({"jsonrpc": "2.0", "id": None, "method": "tools/list"}), -32600, 400, None),
    ("id bool", raw({"jsonrpc": "2.0", "id": True, "method": "tools/list"}), -32600, 400, None),
    ("id float", raw({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}), -32600, 400, None),
    (
        "no jsonrpc",
        raw({"id": 7, "method": "tools/list", "params": {"_meta": meta()}}),
        -32600,
        400,
        7,
    ),
    ("method not a string", raw({"jsonrpc": "2.0", "id": 7, "method": 3}), -32600, 400, 7),
    (
        "params an array",
        raw({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}),
        -32600,
        400,
        7,
    ),
    (
        "no params at all",
        raw({"jsonrpc": "2.0", "id": 8, "method": "server/discover"}),
        -32602,
        400,
        8,
    ),
    ("empty params", request(9, "server/discover", {}, modern=False), -32602, 400, 9),
    (
        "missing clientCapabilities",
        raw(
            {
                "jsonrpc": "2.0",
                "id": "a",
                "method": "server/discover",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": V}},
            }
        ),
        -32602,
        400,
        "a",
    ),
    (
        "clientInfo is optional",
        raw(
            {
                "jsonrpc": "2.0",
                "id": "b",
                "method": "server/discover",
                "params": {
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": V,
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                },
            }
        ),
        None,
        200,
        "b",
    ),
    (
        "unsupported version",
        raw(
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "server/discover",
                "params": {
                    "_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
                },
            }
        ),
        -32022,
        400,
        10,
    ),
    (
        "legacy version on the modern path",
        raw(
            {
                "jsonrpc": "2.0",
                "id": 11,
                "method": "tools/list",
                "params": {
                    "_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
                },
            }
        ),
        -32022,
        400,
        11,
    ),
    (
        "bad log level",
        request(12, "tools/list", **{"io.modelcontextprotocol/logLevel": "loud"}),
        -32602,
        400,
        12,
    ),
    ("unknown method", request(13, "unknown/method"), -32601, 404, 13),
    (
        "initialize with modern _meta",
        request(14, "initialize", {"protocolVersion": "2025-11-25"}),
        -32601,
        404,
        14,
    ),
    ("ping with modern _meta", request(15, "ping"), -32601, 404, 15),
    (
        "logging/setLevel with modern _meta",
        request(16, "logging/setLevel", {"level": "info"}),
        -32601,
        404,
        16,
    ),
    (
        "resources/subscribe with modern _meta",
        request(17, "resources/subscribe", {"uri": "x"}),
        -32601,
        404,
        17,
    ),
    (
        "resources/unsubscribe with modern _meta",
        request(18, "resources/unsubscribe", {"uri": "x"}),
        -32601,
        404,
        18,
    ),
    ("tools/call shape wrong", request(19, "tools/call", {"arguments": {}}), -32602, 200, 19),
    ("unknown tool", request(20, "tools/call", {"name": "nope"}), -32602, 200, 20),
    (
        "arguments not an object",
        request(21, "tools/call", {"name": "echo", "arguments": [1]}),
        -32602,
        200,
        21,
    ),
    ("string ids are fine", request("req-1", "tools/list"), None, 200, "req-1"),
    (
        "batch outside a 2025-03-26 session",
        raw([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        -32600,
        400,
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "line", "code", "status", "rid"), CASES, ids=[c[0] for c in CASES]
)
def test_policy(
    client: Client, case: str, line: bytes, code: int | None, status: int, rid: Any
) -> None:
    out = client.send(line)
    assert isinstance(out, bytes)
    reply = json.loads(out)
    assert b"\n" not in out  # one compact line
    if code is None:
        assert "result" in reply, reply
        assert reply["id"] == rid
        return
    assert reply["error"]["code"] == code, reply
    assert isinstance(out, ErrorFrame)
    assert out.status == status
    if rid is None:
        assert "id" not in reply
    else:
        assert reply["id"] == rid


def test_unsupported_version_data(client: Client) -> None:
    line = raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}},
        }
    )
    data = client.reply(line)["error"]["data"]  # type: ignore[index]
    discover = client.reply(request(2, "server/discover"))["result"]  # type: ignore[index]
    assert data["requested"] == "v999.0.0"
    assert data["supported"] and set(data["supported"]) <= set(discover["supportedVersions"])


def test_notifications_and_stray_responses_get_nothing(client: Client) -> None:
    assert client.send(raw({"jsonrpc": "2.0", "method": "notifications/whatever"})) is None
    assert (
        client.send(
            raw(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
            )
        )
        is None
    )
    assert client.send(raw({"jsonrpc": "2.0", "id": 5, "result": {}})) is None
    assert (
        client.send(raw({"jsonrpc": "2.0", "id": 5, "error": {"code": 1, "message": "x"}})) is None
    )


def test_capability_gating_without_prompts() -> None:
    from mcpgen import Server

    bare = Server("bare")

    @bare.tool
    def only() -> str:
        return "x"

    c = Client(bare)
    caps = c.reply(request(1, "server/discover"))["result"]["capabilities"]  # type: ignore[index]
    assert "prompts" not in caps and "resources" not in caps and "tools" in caps
    for i, method in enumerate(["prompts/list", "resources/list", "completion/complete"]):
        reply = c.reply(request(i + 10, method))
        assert reply is not None and reply["error"]["code"] == -32601


# -- mirrored HTTP headers ------------------------------------------------------------------
def headers(method: str, **extra: str) -> dict[str, str]:
    return {
        "mcp-protocol-version": V,
        "mcp-method": method,
        **{k.lower(): v for k, v in extra.items()},
    }


HEADER_CASES: list[tuple[str, bytes, dict[str, str], int | None]] = [
    ("all good", request(1, "tools/list"), headers("tools/list"), None),
    ("version header missing", request(1, "tools/list"), {"mcp-method": "tools/list"}, -32020),
    (
        "version header differs",
        request(1, "tools/list"),
        headers("tools/list", **{"mcp-protocol-version": "2025-11-25"}),
        -32020,
    ),
    (
        "header differs even when _meta is unsupported",
        raw(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "server/discover",
                "params": {
                    "_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
                },
            }
        ),
        headers("server/discover"),
        -32020,
    ),
    (
        "missing _meta beats header checks",
        request(1, "tools/list", {}, modern=False),
        headers("tools/list"),
        -32602,
    ),
    ("Mcp-Method missing", request(1, "tools/list"), {"mcp-protocol-version": V}, -32020),
    ("Mcp-Method differs", request(1, "tools/list"), headers("prompts/list"), -32020),
    ("Mcp-Method is case-sensitive", request(1, "tools/list"), headers("TOOLS/LIST"), -32020),
    ("Mcp-Method surrounding whitespace", request(1, "tools/list"), headers("  tools/list "), None),
    ("discover probe without headers", request(1, "server/discover"), {}, None),
    (
        "Mcp-Name missing",
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers("tools/call"),
        -32020,
    ),
    (
        "Mcp-Name differs",
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers("tools/call", **{"mcp-name": "add"}),
        -32020,
    ),
    (
        "Mcp-Name with spaces",
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers("tools/call", **{"mcp-name": "  echo  "}),
        None,
    ),
    (
        "Mcp-Name in base64",
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers("tools/call", **{"mcp-name": "=?base64?ZWNobw==?="}),
        None,
    ),
    (
        "Mcp-Name bad base64",
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        headers("tools/call", **{"mcp-name": "=?base64?ZWNobw?="}),
        -32020,
    ),
    (
        "Mcp-Name for resources/read is the uri",
        request(1, "resources/read", {"uri": "mem://readme"}),
        headers("resources/read", **{"mcp-name": "mem://readme"}),
        None,
    ),
    ("unknown method after valid headers", request(1, "nope/nope"), headers("nope/nope"), -32601),
]


@pytest.mark.parametrize(
    ("case", "line", "hdrs", "code"), HEADER_CASES, ids=[c[0] for c in HEADER_CASES]
)
def test_header_rules(
    client: Client, case: str, line: bytes, hdrs: dict[str, str], code: int | None
) -> None:
    out = client.settled(line, Recorder(headers=hdrs))
    reply = json.loads(out)
    if code is None:
        assert "result" in reply, reply
    else:
        assert reply["error"]["code"] == code, reply
        assert out.status == (404 if code == -32601 else 400)


def test_mcp_param_headers() -> None:
    from typing import Annotated

    from mcpgen import Header, Server

    srv = Server("h")

    @srv.tool
    def weather(
        region: Annotated[str, Header("Region")], days: Annotated[int, Header("Days")] = 1
    ) -> str:
        return f"{region}:{days}"

    c = Client(srv)
    schema = c.reply(request(1, "tools/list"))["result"]["tools"][0]["inputSchema"]  # type: ignore[index]
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"

    def call(args: dict[str, Any], **hdr: str) -> dict[str, Any]:
        h = headers(
            "tools/call", **{"mcp-name": "weather"}, **{f"mcp-param-{k}": v for k, v in hdr.items()}
        )
        return json.loads(
            c.settled(
                request(2, "tools/call", {"name": "weather", "arguments": args}),
                Recorder(headers=h),
            )
        )

    assert call({"region": "eu"}, region="eu")["result"]["content"][0]["text"] == "eu:1"
    assert (
        call({"region": "Hello"}, region="=?base64?SGVsbG8=?=")["result"]["content"][0]["text"]
        == "Hello:1"
    )
    assert call({"region": "SGVsbG8="}, region="SGVsbG8=")["result"]  # no sentinel: a literal
    assert call({"region": "eu", "days": 42}, region="eu", days="42.0")[
        "result"
    ]  # numeric comparison
    mismatches = [
        ({"region": "eu"}, {"region": "us"}),  # differs
        ({"region": "eu"}, {}),  # value in the body, header missing
        ({"region": "Hello"}, {"region": "=?base64?SGVsbG8?="}),  # bad padding
        ({"region": "Hello"}, {"region": "=?base64?SGVs!!!bG8=?="}),  # not Base64
        ({"region": "eu", "days": 2}, {"region": "eu", "days": "3"}),
        ({"region": "eu"}, {"region": "eu", "days": "1"}),  # header without the value
    ]
    for args, hdr in mismatches:
        assert call(args, **hdr)["error"]["code"] == -32020, (args, hdr)
