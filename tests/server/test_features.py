"""Tools, resources, templates, prompts, completion, pagination and result stamping."""

from __future__ import annotations

import base64
import json
import logging
from typing import Annotated, Any

import msgspec
import pytest

from mcpgen import (
    CacheHint,
    ConfigurationError,
    McpError,
    Server,
    audio,
    embedded_blob,
    embedded_text,
    image,
    resource_link,
    structured,
    text,
)
from tests.server.harness import Client, request


def result(
    client: Client, rid: Any, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    reply = client.reply(request(rid, method, params))
    assert reply is not None and "result" in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


def error(
    client: Client, rid: Any, method: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    reply = client.reply(request(rid, method, params))
    assert reply is not None and "error" in reply, reply
    assert reply["id"] == rid
    return reply["error"]  # type: ignore[no-any-return]


def test_discover(client: Client) -> None:
    r = result(client, 1, "server/discover")
    assert r["resultType"] == "complete"
    assert r["supportedVersions"][0] == "2026-07-28" and "2025-11-25" in r["supportedVersions"]
    assert r["instructions"] == "Use the tools."
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "test-server",
        "version": "1.2.3",
    }
    assert set(r["capabilities"]) == {"tools", "resources", "prompts", "completions", "logging"}
    assert (r["ttlMs"], r["cacheScope"]) == (0, "private")


def test_tools_list_is_deterministic_with_typed_schemas(client: Client) -> None:
    first = result(client, 1, "tools/list")
    assert [t["name"] for t in first["tools"]][:3] == ["echo", "add", "boom"]  # registration order
    assert first == result(client, 2, "tools/list") | {"_meta": first["_meta"]}
    echo = first["tools"][0]
    assert echo["description"] == "Echo the text back."
    assert echo["inputSchema"] == {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    add = first["tools"][1]
    assert add["outputSchema"] == {"type": "number"}
    assert "nextCursor" not in first


def test_call_returns_text_and_structured(client: Client) -> None:
    assert result(client, 1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})[
        "content"
    ] == [{"type": "text", "text": "hi"}]
    added = result(client, 2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2.5}})
    assert added["structuredContent"] == 3.5
    assert added["content"] == [{"type": "text", "text": "3.5"}]


def test_argument_errors_are_in_band_and_say_what_to_fix(client: Client) -> None:
    missing = result(client, 1, "tools/call", {"name": "echo", "arguments": {}})
    assert missing["isError"] is True
    assert "missing required field `text`" in missing["content"][0]["text"]
    wrong = result(client, 2, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})
    assert wrong["isError"] is True
    message = wrong["content"][0]["text"]
    assert "`$.a`" in message and "Expected `float`" in message and "call it again" in message


def test_handler_exception_becomes_an_error_result(client: Client) -> None:
    r = result(client, 1, "tools/call", {"name": "boom"})  # masked by default
    assert r["isError"] is True and "kaboom" not in r["content"][0]["text"]
    assert "(ref " in r["content"][0]["text"]
    detailed = Client(_with_boom(Server("m", mask_errors=False)))
    r = result(detailed, 2, "tools/call", {"name": "boom"})
    assert r["isError"] is True and "kaboom" in r["content"][0]["text"]


def test_handler_exceptions_are_logged_with_their_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The model sees a tool error (masked or not); the operator sees the traceback on
    `mcpgen.server`, for tools and for resource handlers alike (issue 11, item 11)."""
    srv = _with_boom(Server("m", mask_errors=True))

    @srv.resource("data://broken")
    def broken() -> str:
        raise ValueError("no data here")

    client = Client(srv)
    with caplog.at_level(logging.ERROR, logger="mcpgen.server"):
        r = result(client, 1, "tools/call", {"name": "boom"})
        reply = client.reply(request(2, "resources/read", {"uri": "data://broken"}))
    assert r["isError"] is True and "kaboom" not in r["content"][0]["text"]
    assert reply is not None and reply["error"]["code"] == -32603
    assert "no data here" not in json.dumps(reply)  # masked for the client
    records = {
        r.getMessage().split(" (ref ")[0]: r for r in caplog.records if r.name == "mcpgen.server"
    }
    tool = records["tool 'boom' failed"]
    assert tool.exc_info is not None and "kaboom" in str(tool.exc_info[1])
    read = records["resources/read failed"]
    assert read.exc_info is not None and isinstance(read.exc_info[1], ValueError)


def _with_boom(srv: Server) -> Server:
    @srv.tool
    def boom() -> str:
        raise RuntimeError("kaboom")

    return srv


def test_deliberate_protocol_error_is_a_jsonrpc_error() -> None:
    srv = Server("e")

    @srv.tool
    def strict(x: int) -> str:
        raise McpError(-32099 + 0, "not allowed", {"why": "policy"})

    err = error(Client(srv), 1, "tools/call", {"name": "strict", "arguments": {"x": 1}})
    assert err == {"code": -32099, "message": "not allowed", "data": {"why": "policy"}}


def test_constraints_and_structs_in_arguments() -> None:
    srv = Server("c")

    class Point(msgspec.Struct):
        x: int
        y: int

    @srv.tool
    def plot(
        points: list[Point], limit: Annotated[int, msgspec.Meta(ge=1, le=10)] = 5
    ) -> dict[str, int]:
        return {"n": len(points), "limit": limit}

    c = Client(srv)
    tool = result(c, 1, "tools/list")["tools"][0]
    assert tool["inputSchema"]["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 10,
        "default": 5,
    }
    assert "$defs" in tool["inputSchema"] and tool["outputSchema"]["type"] == "object"
    ok = result(c, 2, "tools/call", {"name": "plot", "arguments": {"points": [{"x": 1, "y": 2}]}})
    assert ok["structuredContent"] == {"n": 1, "limit": 5}
    bad = result(c, 3, "tools/call", {"name": "plot", "arguments": {"points": [], "limit": 50}})
    assert bad["isError"] and "<= 10" in bad["content"][0]["text"]


def test_tools_from_one_factory_share_a_shape_but_not_local_types() -> None:
    """Tools made in a loop reuse one argument shape; a factory whose annotations name
    its own locals gets each call's types, not the first call's."""
    srv = Server("f")

    def numbered(n: int) -> None:
        def tool(query: str, limit: int = 10) -> str:
            return f"{n}:{query}:{limit}"

        srv.add_tool(tool, name=f"tool_{n}", description=f"number {n}")

    def typed(label: str, kind: type) -> None:
        Kind = kind  # noqa: N806 - named in the postponed annotation below

        def tool(value: Kind) -> str:
            return f"{label}:{value!r}"

        srv.add_tool(tool, name=label)

    for n in range(3):
        numbered(n)
    typed("ints", int)
    typed("strs", str)
    c = Client(srv)
    tools = {tool["name"]: tool for tool in result(c, 1, "tools/list")["tools"]}
    assert [tools[f"tool_{n}"]["description"] for n in range(3)] == [
        "number 0",
        "number 1",
        "number 2",
    ]
    assert tools["tool_0"]["inputSchema"] == tools["tool_2"]["inputSchema"]
    call = result(c, 2, "tools/call", {"name": "tool_2", "arguments": {"query": "q"}})
    assert call["content"][0]["text"] == "2:q:10"
    assert tools["ints"]["inputSchema"]["properties"]["value"] == {"type": "integer"}
    assert tools["strs"]["inputSchema"]["properties"]["value"] == {"type": "string"}
    bad = result(c, 3, "tools/call", {"name": "strs", "arguments": {"value": 5}})
    assert bad["isError"]
    good = result(c, 4, "tools/call", {"name": "strs", "arguments": {"value": "x"}})
    assert good["content"][0]["text"] == "strs:'x'"


def test_raw_schema_tools_are_validated() -> None:
    pytest.importorskip("jsonschema_rs")
    srv = Server("r")

    @srv.tool(
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
        }
    )
    def square(n: int) -> int:
        return n * n

    c = Client(srv)
    assert (
        result(c, 1, "tools/call", {"name": "square", "arguments": {"n": 3}})["structuredContent"]
        == 9
    )
    bad = result(c, 2, "tools/call", {"name": "square", "arguments": {"n": -1}})
    assert bad["isError"] and "n: -1 is less than the minimum of 0" in bad["content"][0]["text"]


def test_result_builders() -> None:
    srv = Server("b")

    @srv.tool
    def everything() -> list[Any]:
        return [
            text("t"),
            image(b"\x89PNG", "image/png"),
            audio(b"RIFF", "audio/wav"),
            resource_link("file:///a.txt", "a", mime_type="text/plain"),
            embedded_text("mem://x", "inline", "text/plain"),
            embedded_blob("mem://y", b"\x00\x01"),
        ]

    @srv.tool
    def summary() -> Any:
        return structured({"k": [1, 2]}, summary="two items")

    c = Client(srv)
    blocks = result(c, 1, "tools/call", {"name": "everything"})["content"]
    assert [b["type"] for b in blocks] == [
        "text",
        "image",
        "audio",
        "resource_link",
        "resource",
        "resource",
    ]
    assert blocks[1]["data"] == base64.b64encode(b"\x89PNG").decode()
    assert blocks[4]["resource"] == {"uri": "mem://x", "mimeType": "text/plain", "text": "inline"}
    assert blocks[5]["resource"]["blob"] == "AAE="
    s = result(c, 2, "tools/call", {"name": "summary"})
    assert s["structuredContent"] == {"k": [1, 2]} and s["content"][0]["text"] == "two items"


# -- resources ---------------------------------------------------------------------------------
def test_resources_and_templates(client: Client) -> None:
    listed = result(client, 1, "resources/list")["resources"]
    assert [r["uri"] for r in listed] == ["mem://readme", "mem://logo"]
    assert listed[1]["size"] == 4
    templates = result(client, 2, "resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == [
        "users://{user_id}/profile",
        "files:///{+path}",
    ]
    text_read = result(client, 3, "resources/read", {"uri": "mem://readme"})
    assert text_read["contents"] == [
        {"uri": "mem://readme", "mimeType": "text/plain", "text": "read me"}
    ]
    assert (text_read["ttlMs"], text_read["cacheScope"]) == (0, "private")
    blob = result(client, 4, "resources/read", {"uri": "mem://logo"})["contents"][0]
    assert base64.b64decode(blob["blob"]) == b"\x89PNG" and blob["mimeType"] == "image/png"
    profile = result(client, 5, "resources/read", {"uri": "users://a%20b/profile"})["contents"][0]
    assert profile["text"] == '{"id": "a b"}' and profile["uri"] == "users://a%20b/profile"
    assert (
        result(client, 6, "resources/read", {"uri": "files:///docs/x.txt"})["contents"][0]["text"]
        == "file docs/x.txt"
    )


@pytest.mark.parametrize(
    "uri",
    [
        "files:///docs/../../etc/passwd",
        "users://..%2F..%2Fetc/profile",
        "nope://x",
        "users://a/b/profile",
    ],
)
def test_unknown_or_traversing_uris_are_not_found(client: Client, uri: str) -> None:
    err = error(client, 1, "resources/read", {"uri": uri})
    assert err["code"] == -32602 and err["data"] == {"uri": uri}


def test_exact_resource_wins_over_template() -> None:
    srv = Server("w")
    srv.add_resource("users://me/profile", "exact")

    @srv.resource_template("users://{user_id}/profile")
    def profile(user_id: str) -> str:
        return "template"

    assert (
        result(Client(srv), 1, "resources/read", {"uri": "users://me/profile"})["contents"][0][
            "text"
        ]
        == "exact"
    )


# -- prompts and completion -------------------------------------------------------------------
def test_prompts(client: Client) -> None:
    listed = result(client, 1, "prompts/list")["prompts"]
    assert listed == [
        {
            "arguments": [{"name": "name", "required": True}, {"name": "style", "required": False}],
            "description": "Greet someone.",
            "name": "greet",
        }
    ]
    got = result(client, 2, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert got["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Hello Ada (plain)"}}
    ]
    assert error(client, 3, "prompts/get", {"name": "greet", "arguments": {}})["code"] == -32602
    assert error(client, 4, "prompts/get", {"name": "nope"})["code"] == -32602


def test_completion(client: Client) -> None:
    r = result(
        client,
        1,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "al"},
        },
    )
    assert r["completion"] == {"values": ["alice", "albert"], "total": 2, "hasMore": False}
    empty = result(
        client,
        2,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "users://{user_id}/profile"},
            "argument": {"name": "user_id", "value": ""},
        },
    )
    assert empty["completion"]["values"] == []
    assert (
        error(
            client,
            3,
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}},
        )["code"]
        == -32602
    )


# -- pagination, caching, registry -------------------------------------------------------------
def test_pagination_with_opaque_cursors() -> None:
    srv = Server("p", page_size=2)
    for i in range(5):
        srv.add_tool(lambda: "x", name=f"t{i}")
    c = Client(srv)
    names, cursor, pages = [], None, 0
    while True:
        page = result(c, pages, "tools/list", {"cursor": cursor} if cursor else {})
        names += [t["name"] for t in page["tools"]]
        pages += 1
        cursor = page.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str)
    assert names == ["t0", "t1", "t2", "t3", "t4"] and pages == 3
    for bad in ("garbage", cursor_for_other_list(c)):
        assert error(c, 99, "tools/list", {"cursor": bad})["code"] == -32602


def cursor_for_other_list(c: Client) -> str:
    return c.session.core.sealer.cursor("prompts/list", 2)


def test_cache_hints_are_configurable() -> None:
    srv = Server("h", cache={"tools/list": CacheHint(60_000, "public")})
    srv.add_tool(lambda: "x", name="a")
    c = Client(srv)
    r = result(c, 1, "tools/list")
    assert (r["ttlMs"], r["cacheScope"]) == (60_000, "public")
    d = result(c, 2, "server/discover")
    assert (d["ttlMs"], d["cacheScope"]) == (0, "private")


def test_registry_changes_after_start_swap_the_snapshot() -> None:
    srv = Server("s")
    srv.add_tool(lambda: "one", name="one")
    c = Client(srv)
    assert [t["name"] for t in result(c, 1, "tools/list")["tools"]] == ["one"]
    srv.add_tool(lambda: "two", name="two")
    assert [t["name"] for t in result(c, 2, "tools/list")["tools"]] == ["one", "two"]
    srv.remove_tool("one")
    assert [t["name"] for t in result(c, 3, "tools/list")["tools"]] == ["two"]


def test_misuse_is_reported_at_registration() -> None:
    srv = Server("m")
    srv.add_tool(lambda: "x", name="dup")
    with pytest.raises(ConfigurationError, match="registered twice"):
        srv.add_tool(lambda: "x", name="dup")
    with pytest.raises(ConfigurationError, match="tool name"):
        srv.add_tool(lambda: "x", name="has space")
    with pytest.raises(ConfigurationError, match="not an HTTP token"):
        srv.add_tool(
            lambda: "x",
            name="h1",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "string", "x-mcp-header": "bad name"}},
            },
        )
    with pytest.raises(ConfigurationError, match="string, integer, boolean"):
        srv.add_tool(
            lambda: "x",
            name="h2",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "number", "x-mcp-header": "A"}},
            },
        )
    with pytest.raises(ConfigurationError, match="used twice"):
        srv.add_tool(
            lambda: "x",
            name="h3",
            input_schema={
                "type": "object",
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "A"},
                    "b": {"type": "string", "x-mcp-header": "a"},
                },
            },
        )
    with pytest.raises(ConfigurationError, match="not on a root property"):
        srv.add_tool(
            lambda: "x",
            name="h4",
            input_schema={
                "type": "object",
                "properties": {
                    "a": {
                        "type": "object",
                        "properties": {"b": {"type": "string", "x-mcp-header": "B"}},
                    }
                },
            },
        )
    with pytest.raises(ConfigurationError, match="lacks parameters"):
        srv.resource_template("x://{missing}")(lambda: "x")


def test_stamped_results_never_share_the_handlers_meta() -> None:
    srv = Server("meta")

    @srv.tool
    def tagged() -> Any:
        from mcpgen.types import CallToolResult

        return CallToolResult(content=[text("x")], meta={"vendor.example/k": 1})

    r = result(Client(srv), 1, "tools/call", {"name": "tagged"})
    assert r["_meta"] == {
        "vendor.example/k": 1,
        "io.modelcontextprotocol/serverInfo": {"name": "meta", "version": "0.1.0"},
    }


def test_lines_are_compact_json(client: Client) -> None:
    out = client.send(request(1, "tools/list"))
    assert b"\n" not in out and json.loads(out)["id"] == 1
