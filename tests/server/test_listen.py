"""subscriptions/listen: ack first, filters honoured, every frame tagged, final result."""

from __future__ import annotations

from typing import Any

from mcpgen import Server
from mcpgen._server import DEFERRED
from tests.server.harness import Client, Recorder, notification, request

SUB = "io.modelcontextprotocol/subscriptionId"


def listen(client: Client, rid: Any, filters: dict[str, Any]) -> Recorder:
    channel = Recorder()
    assert (
        client.send(request(rid, "subscriptions/listen", {"notifications": filters}), channel)
        is DEFERRED
    )
    return channel


def test_ack_first_then_tagged_notifications(server: Server, client: Client) -> None:
    stream = listen(
        client, 7, {"toolsListChanged": True, "resourceSubscriptions": ["mem://readme"]}
    )
    (ack,) = stream.take()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["mem://readme"]},
        "_meta": {SUB: 7},
    }
    server.notify_tools_changed()
    server.notify_prompts_changed()  # not asked for
    server.notify_resource_updated("mem://readme/part")  # a sub-resource
    server.notify_resource_updated("mem://other")
    frames = stream.take()
    assert [f["method"] for f in frames] == [
        "notifications/tools/list_changed",
        "notifications/resources/updated",
    ]
    assert all(f["params"]["_meta"][SUB] == 7 for f in frames)
    assert frames[1]["params"]["uri"] == "mem://readme/part"


def test_subscription_id_keeps_its_json_type(server: Server, client: Client) -> None:
    stream = listen(client, "7", {"promptsListChanged": True})
    server.notify_prompts_changed()
    assert [f["params"]["_meta"][SUB] for f in stream.take()] == ["7", "7"]


def test_unsupported_types_are_left_out_of_the_ack() -> None:
    srv = Server("t")
    srv.add_tool(lambda: "x", name="only")
    stream = listen(
        Client(srv),
        1,
        {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["a"]},
    )
    assert stream.take()[0]["params"]["notifications"] == {"toolsListChanged": True}


def test_tool_changes_reach_only_matching_streams(server: Server, client: Client) -> None:
    tools, prompts = (
        listen(client, 1, {"toolsListChanged": True}),
        listen(client, 2, {"promptsListChanged": True}),
    )
    tools.take(), prompts.take()
    server.add_tool(lambda: "new", name="added_later")  # registry swap publishes the change
    assert [f["method"] for f in tools.take()] == ["notifications/tools/list_changed"]
    assert prompts.take() == []


def test_cancel_ends_a_stream_and_close_sends_final_results(server: Server, client: Client) -> None:
    a, b = (
        listen(client, 1, {"toolsListChanged": True}),
        listen(client, 2, {"toolsListChanged": True}),
    )
    a.take(), b.take()
    client.send(notification("notifications/cancelled", {"requestId": 1}))
    server.notify_tools_changed()
    assert a.take() == [] and len(b.take()) == 1
    server.close()
    (final,) = b.take("reply")
    assert (
        final["id"] == 2
        and final["result"]["_meta"][SUB] == 2
        and final["result"]["resultType"] == "complete"
    )
    server.notify_tools_changed()
    assert b.take() == []
