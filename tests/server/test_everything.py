"""examples/everything.py in process: the fixtures the conformance suite relies on.

The transport-level suite runs in CI against the HTTP server; these checks catch a
broken fixture in milliseconds and without Node.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from mcpgen._server import DEFERRED
from tests.conftest import REPO
from tests.server.harness import Client, request

sys.path.insert(0, str(REPO / "examples"))
import everything

SUITE_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}


@pytest.fixture
def c() -> Client:
    return Client(everything.server)


def ok(
    c: Client, rid: Any, method: str, params: dict[str, Any] | None = None, **kw: Any
) -> dict[str, Any]:
    reply = asyncio.run(
        c.areply(request(rid, method, params, caps=kw.pop("caps", SUITE_CAPS), **kw))
    )
    assert reply is not None and "result" in reply, reply
    return reply["result"]  # type: ignore[no-any-return]


def test_fixture_lists(c: Client) -> None:
    tools = ok(c, 1, "tools/list")["tools"]
    assert tools[0]["name"] == "test_simple_text"
    assert all(t.get("description") for t in tools)
    schema = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert (
        schema["$defs"]["address"]["$anchor"] == "addressDef"
        and schema["additionalProperties"] is False
    )
    assert {"if", "then", "else", "allOf"} <= set(schema)
    header_tool = next(t for t in tools if t["name"] == "test_custom_headers")
    assert header_tool["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Region"
    resources = ok(c, 2, "resources/list")["resources"]
    assert resources[0]["uri"] == "test://static-text" and all(
        r.get("description") for r in resources
    )
    assert (
        ok(c, 3, "resources/templates/list")["resourceTemplates"][0]["uriTemplate"]
        == "test://template/{id}/data"
    )
    prompts = ok(c, 4, "prompts/list")["prompts"]
    assert all(p.get("description") for p in prompts)


def test_content_tools(c: Client) -> None:
    assert ok(c, 1, "tools/call", {"name": "test_simple_text"})["content"][0]["text"]
    assert (
        ok(c, 2, "tools/call", {"name": "test_audio_content"})["content"][0]["mimeType"]
        == "audio/wav"
    )
    mixed = ok(c, 3, "tools/call", {"name": "test_multiple_content_types", "arguments": {}})[
        "content"
    ]
    assert [b["type"] for b in mixed] == ["text", "image", "resource"]
    error = ok(c, 4, "tools/call", {"name": "test_error_handling"})
    assert error["isError"] is True


def test_progress_before_the_result(c: Client) -> None:
    ok(c, 1, "tools/call", {"name": "test_tool_with_progress"}, progressToken="progress-test-1")
    progress = [f["params"] for f in c.channel.take()]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert all(p["progressToken"] == "progress-test-1" for p in progress)


def test_no_logs_without_a_level(c: Client) -> None:
    ok(c, 1, "tools/call", {"name": "test_logging_tool"})
    assert c.channel.take() == []


def test_resources(c: Client) -> None:
    assert (
        ok(c, 1, "resources/read", {"uri": "test://static-binary"})["contents"][0]["blob"]
        == everything.RED_PIXEL_PNG
    )
    data = ok(c, 2, "resources/read", {"uri": "test://template/123/data"})["contents"][0]
    assert json.loads(data["text"]) == {
        "id": "123",
        "templateTest": True,
        "data": "Data for ID: 123",
    }
    missing = c.reply(
        request(3, "resources/read", {"uri": "test://nonexistent-resource-for-conformance-testing"})
    )
    assert missing["error"]["code"] == -32602  # type: ignore[index]
    assert missing["error"]["data"]["uri"] == "test://nonexistent-resource-for-conformance-testing"  # type: ignore[index]


def test_prompts_and_completion(c: Client) -> None:
    got = ok(
        c,
        1,
        "prompts/get",
        {
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "testValue1", "arg2": "testValue2"},
        },
    )
    assert "testValue1" in json.dumps(got["messages"]) and "testValue2" in json.dumps(
        got["messages"]
    )
    embedded = ok(
        c,
        2,
        "prompts/get",
        {
            "name": "test_prompt_with_embedded_resource",
            "arguments": {"resourceUri": "test://example-resource"},
        },
    )
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "test://example-resource"
    completion = ok(
        c,
        3,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "test"},
        },
    )
    assert isinstance(completion["completion"]["values"], list)


def test_mrtr_fixtures(c: Client) -> None:
    first = ok(c, 1, "tools/call", {"name": "test_input_required_result_elicitation"})
    assert first["resultType"] == "input_required" and "user_name" in first["inputRequests"]
    done = ok(
        c,
        2,
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "inputResponses": {
                "user_name": {"action": "accept", "content": {"name": "Alice"}},
                "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
            },
        },
    )
    assert done["content"][0]["text"] == "Hello, Alice!"  # completes without requestState
    wrong = ok(
        c,
        3,
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "inputResponses": {"wrong_key": {"action": "accept", "content": {"data": "wrong"}}},
        },
    )
    assert wrong["resultType"] == "input_required"
    for bad in (12345, None):
        answers = {"user_name": bad} if bad is not None else None
        reply = c.reply(
            request(
                4,
                "tools/call",
                {"name": "test_input_required_result_elicitation", "inputResponses": answers},
                caps=SUITE_CAPS,
            )
        )
        assert "error" in reply or reply["result"]["resultType"] != "complete"  # type: ignore[index]
    s1 = ok(c, 5, "tools/call", {"name": "test_input_required_result_request_state"})
    s2 = ok(
        c,
        6,
        "tools/call",
        {
            "name": "test_input_required_result_request_state",
            "requestState": s1["requestState"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        },
    )
    assert "state-ok" in s2["content"][0]["text"]
    m1 = ok(c, 7, "tools/call", {"name": "test_input_required_result_multi_round"})
    m2 = ok(
        c,
        8,
        "tools/call",
        {
            "name": "test_input_required_result_multi_round",
            "requestState": m1["requestState"],
            "inputResponses": {"step1": {"action": "accept", "content": {"name": "Alice"}}},
        },
    )
    assert m2["resultType"] == "input_required" and m2["requestState"] != m1["requestState"]
    m3 = ok(
        c,
        9,
        "tools/call",
        {
            "name": "test_input_required_result_multi_round",
            "requestState": m2["requestState"],
            "inputResponses": {"step2": {"action": "accept", "content": {"color": "blue"}}},
        },
    )
    assert m3["content"][0]["text"] == "Alice likes blue"
    multi = ok(c, 10, "tools/call", {"name": "test_input_required_result_multiple_inputs"})
    assert {v["method"] for v in multi["inputRequests"].values()} == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }
    caps_only = ok(
        c,
        11,
        "tools/call",
        {"name": "test_input_required_result_capabilities"},
        caps={"sampling": {}},
    )
    assert [v["method"] for v in caps_only["inputRequests"].values()] == ["sampling/createMessage"]
    t1 = ok(c, 12, "tools/call", {"name": "test_input_required_result_tampered_state"})
    tampered = c.reply(
        request(
            13,
            "tools/call",
            {
                "name": "test_input_required_result_tampered_state",
                "requestState": t1["requestState"] + "-TAMPERED",
                "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
            },
            caps=SUITE_CAPS,
        )
    )
    assert tampered["error"]["code"] == -32602  # type: ignore[index]
    p1 = ok(c, 14, "prompts/get", {"name": "test_input_required_result_prompt"})
    p2 = ok(
        c,
        15,
        "prompts/get",
        {
            "name": "test_input_required_result_prompt",
            "requestState": p1["requestState"],
            "inputResponses": {
                "user_context": {"action": "accept", "content": {"context": "test context"}}
            },
        },
    )
    assert p2["messages"][0]["content"]["text"] == "Use this context: test context"


def test_listen_and_triggers(c: Client) -> None:
    from tests.server.harness import Recorder

    stream = Recorder()
    assert (
        c.send(
            request(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
            stream,
        )
        is DEFERRED
    )
    ok(c, 2, "tools/call", {"name": "test_trigger_tool_change"}, caps={})
    ok(c, 3, "tools/call", {"name": "test_trigger_prompt_change"}, caps={})
    frames = stream.take()
    assert [f["method"] for f in frames] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    c.session.close()


def test_legacy_era_fixtures(c: Client) -> None:
    init = c.initialize(caps={"sampling": {}, "elicitation": {}})["result"]
    assert set(init["capabilities"]) >= {"tools", "resources", "prompts", "logging", "completions"}
    assert c.reply(request(2, "logging/setLevel", {"level": "debug"}, modern=False))["result"] == {}  # type: ignore[index]
    logs = asyncio.run(
        c.areply(request(3, "tools/call", {"name": "test_tool_with_logging"}, modern=False))
    )
    assert logs["result"]["content"][0]["text"] == "Tool with logging executed successfully"
    assert [f["params"]["data"] for f in c.channel.take()] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    out = c.settled(
        request(
            4,
            "tools/call",
            {"name": "test_sampling", "arguments": {"prompt": "Test prompt for sampling"}},
            modern=False,
        )
    )
    assert out is DEFERRED
    (sampling,) = c.channel.take("request")
    assert sampling["method"] == "sampling/createMessage" and sampling["params"]["maxTokens"] == 100
    c.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": sampling["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "This is a test response from the client"},
                    "model": "test-model",
                    "stopReason": "endTurn",
                },
            }
        ).encode()
    )
    (final,) = c.channel.take("reply")
    assert (
        final["result"]["content"][0]["text"]
        == "LLM response: This is a test response from the client"
    )
    c.settled(request(5, "tools/call", {"name": "test_elicitation_sep1330_enums"}, modern=False))
    (enums,) = c.channel.take("request")
    props = enums["params"]["requestedSchema"]["properties"]
    assert props["legacyEnum"]["enumNames"] == ["Option One", "Option Two", "Option Three"]
    assert props["titledMulti"]["items"]["anyOf"][0] == {"const": "value1", "title": "First Choice"}
    assert (
        c.reply(
            request(6, "resources/subscribe", {"uri": "test://watched-resource"}, modern=False)
        )["result"]
        == {}
    )  # type: ignore[index]


TASKS_CAPS = {**SUITE_CAPS, "extensions": {"io.modelcontextprotocol/tasks": {}}}


def test_task_fixtures() -> None:
    """The Tasks extension fixtures: plain, task, input round in a task, MRTR-then-task."""

    async def body(c: Client) -> None:
        async def result(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
            reply = await c.areply(request(rid, method, params, caps=TASKS_CAPS))
            assert "result" in reply, reply
            return reply["result"]  # type: ignore[no-any-return]

        async def settle(task_id: str, status: str = "completed") -> dict[str, Any]:
            for rid in range(500):
                task = await result(rid, "tasks/get", {"taskId": task_id})
                if task["status"] == status:
                    return task
                await asyncio.sleep(0.01)
            raise AssertionError(task)

        greet = await result(1, "tools/call", {"name": "greet", "arguments": {"name": "Ada"}})
        assert greet["content"][0]["text"] == "Hello, Ada!"
        slow = await result(2, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
        assert (await settle(slow["taskId"]))["result"]["content"][0]["text"].startswith("Comp")
        confirm = {"name": "confirm_delete", "arguments": {"filename": "a.txt"}}
        task_id = (await result(3, "tools/call", confirm))["taskId"]
        waiting = await settle(task_id, "input_required")
        (key,) = waiting["inputRequests"]
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        await result(4, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert (await settle(task_id))["result"]["content"][0]["text"] == "Deleted a.txt"
        first = await result(5, "tools/call", {"name": "test_tool_with_task", "arguments": {}})
        retry = {
            "name": "test_tool_with_task",
            "arguments": {},
            "requestState": first["requestState"],
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
        }
        created = await result(6, "tools/call", retry)
        done = await settle(created["taskId"])
        assert done["result"]["content"][0]["text"] == "Hello, Alice!"

    asyncio.run(asyncio.wait_for(body(Client(everything.server)), 10))
