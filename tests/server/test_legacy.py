"""The legacy dialect: initialize, faithful results per revision, session features."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpgen import Server, audio, resource_link, text
from mcpgen._server._methods import initialize_result
from tests.server.harness import Client, notification, request


def legacy(
    client: Client, rid: Any, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    reply = client.reply(request(rid, method, params, modern=False))
    assert reply is not None
    return reply


@pytest.mark.parametrize(
    ("asked", "agreed"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ],
)
def test_initialize_negotiates(client: Client, asked: str, agreed: str) -> None:
    r = client.initialize(asked)["result"]
    assert r["protocolVersion"] == agreed
    assert r["serverInfo"] == {"name": "test-server", "version": "1.2.3"}
    assert r["instructions"] == "Use the tools."
    assert "resultType" not in r and "_meta" not in r
    if agreed == "2024-11-05":
        assert "completions" not in r["capabilities"]  # unknown to that revision


def test_results_carry_no_modern_stamps(client: Client) -> None:
    client.initialize()
    for rid, method, params in [
        (1, "tools/list", None),
        (2, "resources/read", {"uri": "mem://readme"}),
        (3, "prompts/list", None),
        (4, "ping", None),
    ]:
        r = legacy(client, rid, method, params)["result"]
        assert not {"resultType", "ttlMs", "cacheScope"} & set(r), r
        assert "io.modelcontextprotocol/serverInfo" not in r.get("_meta", {})
    assert legacy(client, 5, "ping")["result"] == {}
    assert legacy(client, 6, "logging/setLevel", {"level": "error"})["result"] == {}


def test_modern_only_methods_are_unknown_in_a_session(client: Client) -> None:
    client.initialize()
    assert legacy(client, 1, "server/discover")["error"]["code"] == -32601
    assert (
        legacy(client, 2, "subscriptions/listen", {"notifications": {}})["error"]["code"] == -32601
    )


def test_modern_request_on_a_legacy_connection_is_served_statelessly(client: Client) -> None:
    client.initialize("2024-11-05")
    r = client.reply(request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}}))
    assert (
        r is not None
        and r["result"]["resultType"] == "complete"
        and r["result"]["structuredContent"] == 2
    )


def test_not_found_dialect(client: Client) -> None:
    client.initialize()
    assert legacy(client, 1, "resources/read", {"uri": "nope://"})["error"] == {
        "code": -32002,
        "message": "resource not found: nope://",
        "data": {"uri": "nope://"},
    }


def downgrade_server() -> Server:
    srv = Server("d")

    @srv.tool
    def rich() -> list[Any]:
        return [text("t"), audio(b"RIFF", "audio/wav"), resource_link("file:///a", "a")]

    @srv.tool
    def number() -> float:
        return 2.5

    @srv.tool
    def record() -> dict[str, int]:
        return {"a": 1}

    return srv


@pytest.mark.parametrize(
    ("version", "types"),
    [
        ("2024-11-05", ["text", "text", "text"]),
        ("2025-03-26", ["text", "audio", "text"]),
        ("2025-06-18", ["text", "audio", "resource_link"]),
        ("2025-11-25", ["text", "audio", "resource_link"]),
    ],
)
def test_content_downgraded_per_revision(version: str, types: list[str]) -> None:
    c = Client(downgrade_server())
    c.initialize(version)
    content = legacy(c, 1, "tools/call", {"name": "rich"})["result"]["content"]
    assert [b["type"] for b in content] == types
    if version == "2024-11-05":
        assert (
            content[1]["text"] == "[audio (audio/wav) omitted]"
            and "file:///a" in content[2]["text"]
        )


def test_structured_content_and_output_schema_downgrade() -> None:
    c = Client(downgrade_server())
    c.initialize("2025-06-18")
    tools = {t["name"]: t for t in legacy(c, 1, "tools/list")["result"]["tools"]}
    # Not an object schema, which a 2025 revision wants: wrapped as {"result": ...}.
    assert tools["number"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "number"}},
        "required": ["result"],
        "x-mcpgen-wrap-result": True,
    }
    assert tools["record"]["outputSchema"]["type"] == "object"
    number = legacy(c, 2, "tools/call", {"name": "number"})["result"]
    assert number["structuredContent"] == {"result": 2.5}
    assert legacy(c, 3, "tools/call", {"name": "record"})["result"]["structuredContent"] == {"a": 1}
    old = Client(downgrade_server())
    old.initialize("2025-03-26")
    assert "structuredContent" not in legacy(old, 1, "tools/call", {"name": "record"})["result"]
    assert "outputSchema" not in legacy(old, 2, "tools/list")["result"]["tools"][2]


def test_batches_in_a_2025_03_26_session(client: Client) -> None:
    client.initialize("2025-03-26")
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/whatever"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "b"}},
            },
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "steps", "arguments": {"count": 1}},
            },
        ]
    ).encode()
    out = client.reply(batch)
    assert isinstance(out, list) and [r["id"] for r in out] == [1, 2, 3]  # type: ignore[unreachable]
    assert out[1]["result"]["content"][0]["text"] == "b"
    assert json.loads(client.send(b"[]"))["error"]["code"] == -32600


def test_batches_elsewhere_are_rejected(client: Client) -> None:
    client.initialize("2025-06-18")
    assert (
        json.loads(client.send(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'))["error"]["code"]
        == -32600
    )


def test_log_level_is_session_wide(client: Client) -> None:
    client.initialize()
    legacy(client, 1, "tools/call", {"name": "steps", "arguments": {"count": 1}})
    levels = [
        f["params"]["level"]
        for f in client.channel.take("notify")
        if f["method"] == "notifications/message"
    ]
    assert levels == ["info", "debug"]  # every level until setLevel
    legacy(client, 2, "logging/setLevel", {"level": "info"})
    legacy(client, 3, "tools/call", {"name": "steps", "arguments": {"count": 2}})
    levels = [
        f["params"]["level"]
        for f in client.channel.take("notify")
        if f["method"] == "notifications/message"
    ]
    assert levels == ["info", "info"]


def test_subscriptions_and_list_changed_reach_legacy_sessions(server: Server) -> None:
    watcher, other = Client(server), Client(server)
    watcher.initialize()
    other.initialize()
    legacy(watcher, 1, "resources/subscribe", {"uri": "mem://readme"})
    server.notify_resource_updated("mem://readme")
    server.notify_resource_updated("mem://logo")
    server.notify_tools_changed()
    assert [f["method"] for f in watcher.channel.take()] == [
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]
    assert [f["method"] for f in other.channel.take()] == ["notifications/tools/list_changed"]
    legacy(watcher, 2, "resources/unsubscribe", {"uri": "mem://readme"})
    server.notify_resource_updated("mem://readme")
    assert watcher.channel.take() == []


def test_sessions_not_yet_initialized_get_no_notifications(server: Server) -> None:
    c = Client(server)
    c.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "x", "version": "1"},
                },
            }
        ).encode()
    )
    server.notify_tools_changed()
    assert c.channel.take() == []
    c.send(notification("notifications/initialized"))
    server.notify_tools_changed()
    assert len(c.channel.take()) == 1


def test_bad_initialize_params(client: Client) -> None:
    r = client.reply(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
    )
    assert r is not None and r["error"]["code"] == -32602


def test_initialize_follows_what_the_server_offers_now() -> None:
    """Each session's handshake is built once per revision and reused: a feature added
    later, or new info and instructions (a proxy adopts its upstream's), show in the
    next session's answer."""
    server = Server("before", "1")
    first = Client(server).initialize()["result"]
    assert "tools" not in first["capabilities"]
    assert Client(server).initialize()["result"] == first
    built = initialize_result(server.core, "2025-11-25")
    assert initialize_result(server.core, "2025-11-25") is built  # reused, not rebuilt

    @server.tool
    def ping_back() -> str:
        """Pong."""
        return "pong"

    later = Client(server).initialize()["result"]
    assert later["capabilities"]["tools"] == {"listChanged": True}
    core = server.core
    core.info = type(core.info)(name="after", version="2")
    core.instructions = "New instructions."
    renamed = Client(server).initialize()["result"]
    assert renamed["serverInfo"] == {"name": "after", "version": "2"}
    assert renamed["instructions"] == "New instructions."
    older = Client(server).initialize("2024-11-05")["result"]
    assert older["protocolVersion"] == "2024-11-05" and older["serverInfo"]["name"] == "after"
