"""Multi round-trip requests: modern rounds with sealed state, legacy bridging."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpgen import Context, InputRequired, Server, elicit_form, sample
from mcpgen._server._state import Sealer
from tests.server.harness import Client, Recorder, request

ALL = {"elicitation": {}, "sampling": {}, "roots": {}}


def call(
    client: Client,
    rid: Any,
    name: str,
    args: dict[str, Any],
    caps: dict[str, Any] | None = ALL,
    channel: Recorder | None = None,
    **extra: Any,
) -> dict[str, Any]:
    line = request(rid, "tools/call", {"name": name, "arguments": args, **extra}, caps=caps)
    reply = client.reply(line, channel)
    assert reply is not None
    return reply


def test_round_trip_with_sealed_state(client: Client) -> None:
    first = call(client, 1, "confirm", {"action": "delete"})["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["ok"]["method"] == "elicitation/create"
    assert first["inputRequests"]["ok"]["params"]["requestedSchema"]["properties"] == {
        "sure": {"type": "boolean"}
    }
    state = first["requestState"]
    assert isinstance(state, str) and "delete" not in state.split(".")[0]
    second = call(
        client,
        2,
        "confirm",
        {"action": "delete"},
        requestState=state,
        inputResponses={"ok": {"action": "accept", "content": {"sure": True}}},
    )["result"]
    assert second["resultType"] == "complete"
    assert second["content"][0]["text"] == "accept:delete:{'sure': True}"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s + "-TAMPERED", "malformed|integrity"),
        (lambda s: s[:-4] + ("AAAA" if not s.endswith("AAAA") else "BBBB"), "integrity"),
        (lambda s: "garbage", "malformed"),
    ],
)
def test_tampered_state_is_rejected(client: Client, mutate: Any, message: str) -> None:
    state = call(client, 1, "confirm", {"action": "x"})["result"]["requestState"]
    reply = call(
        client,
        2,
        "confirm",
        {"action": "x"},
        requestState=mutate(state),
        inputResponses={"ok": {"action": "accept"}},
    )
    assert reply["error"]["code"] == -32602
    import re

    assert re.search(message, reply["error"]["message"])


def test_state_is_bound_to_the_request(client: Client) -> None:
    state = call(client, 1, "confirm", {"action": "x"})["result"]["requestState"]
    other_args = call(
        client,
        2,
        "confirm",
        {"action": "y"},
        requestState=state,
        inputResponses={"ok": {"action": "accept"}},
    )
    assert "different request" in other_args["error"]["message"]
    other_method = client.reply(
        request(
            3, "prompts/get", {"name": "greet", "arguments": {"name": "a"}, "requestState": state}
        )
    )
    assert other_method is not None and other_method["error"]["code"] == -32602


def test_state_is_bound_to_the_principal(client: Client) -> None:
    state = call(client, 1, "confirm", {"action": "x"}, channel=Recorder(principal="alice"))[
        "result"
    ]["requestState"]
    bob = call(
        client,
        2,
        "confirm",
        {"action": "x"},
        channel=Recorder(principal="bob"),
        requestState=state,
        inputResponses={"ok": {"action": "accept"}},
    )
    assert "different principal" in bob["error"]["message"]
    alice = call(
        client,
        3,
        "confirm",
        {"action": "x"},
        channel=Recorder(principal="alice"),
        requestState=state,
        inputResponses={"ok": {"action": "accept"}},
    )
    assert alice["result"]["resultType"] == "complete"


def test_expired_state_is_rejected() -> None:
    now = [1000.0]
    srv = _confirm_server(Server("x", state_ttl_seconds=60))
    srv._sealer = Sealer([b"k" * 32], ttl_seconds=60, clock=lambda: now[0])
    c = Client(srv)
    state = call(c, 1, "confirm", {"action": "x"})["result"]["requestState"]
    now[0] += 61
    reply = call(
        c,
        2,
        "confirm",
        {"action": "x"},
        requestState=state,
        inputResponses={"ok": {"action": "accept"}},
    )
    assert "expired" in reply["error"]["message"]


def test_key_rotation_and_shared_keys() -> None:
    old, new = b"o" * 32, b"n" * 32
    issuer = Client(_confirm_server(Server("a", state_keys=[old])))
    state = call(issuer, 1, "confirm", {"action": "x"})["result"]["requestState"]
    rotated = Client(
        _confirm_server(Server("b", state_keys=[new, old]))
    )  # another worker, rotated ring
    done = call(
        rotated,
        2,
        "confirm",
        {"action": "x"},
        requestState=state,
        inputResponses={"ok": {"action": "decline"}},
    )
    assert done["result"]["content"][0]["text"].startswith("decline:x")
    stranger = Client(_confirm_server(Server("c", state_keys=[new])))
    refused = call(
        stranger,
        3,
        "confirm",
        {"action": "x"},
        requestState=state,
        inputResponses={"ok": {"action": "accept"}},
    )
    assert refused["error"]["code"] == -32602


def _confirm_server(srv: Server) -> Server:
    @srv.tool
    def confirm(ctx: Context, action: str) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            return InputRequired(
                {"ok": elicit_form("Sure?", {"type": "object", "properties": {}})},
                state={"action": action},
            )
        return f"{answer.action}:{ctx.state['action']}"

    return srv


def test_missing_capability_is_32021_with_an_object(client: Client) -> None:
    reply = call(client, 1, "confirm", {"action": "x"}, caps={"sampling": {}})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    url_only = call(client, 2, "confirm", {"action": "x"}, caps={"elicitation": {"url": {}}})
    assert url_only["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}
    research = call(
        client, 3, "research", {"topic": "t"}, caps={"elicitation": {}, "sampling": {}, "roots": {}}
    )
    assert research["error"]["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}


def test_several_inputs_and_typed_answers(client: Client) -> None:
    caps = {"elicitation": {"url": {}}, "sampling": {}, "roots": {}}
    first = call(client, 1, "research", {"topic": "bees"}, caps=caps)["result"]
    assert {k: v["method"] for k, v in first["inputRequests"].items()} == {
        "roots": "roots/list",
        "summary": "sampling/createMessage",
        "login": "elicitation/create",
    }
    answers = {
        "roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
        "summary": {"role": "assistant", "content": {"type": "text", "text": "buzz"}, "model": "m"},
        "login": {"action": "accept"},
    }
    done = call(
        client,
        2,
        "research",
        {"topic": "bees"},
        caps=caps,
        requestState=first["requestState"],
        inputResponses=answers,
    )
    assert done["result"]["content"][0]["text"] == "2 roots; model said buzz; login accept"


def test_answers_without_state_are_typed_by_shape_and_extras_ignored(client: Client) -> None:
    answers = {
        "ok": {"action": "accept", "content": {"sure": True}},
        "unknown": {"action": "accept"},
    }
    reply = call(client, 1, "confirm", {"action": "x"}, inputResponses=answers)
    # No state came back: the handler sees the answer but no state of its own.
    assert "error" in reply or reply["result"]["resultType"] in ("complete", "input_required")
    wrong_key = call(
        client, 2, "confirm", {"action": "x"}, inputResponses={"wrong": {"action": "accept"}}
    )
    assert wrong_key["result"]["resultType"] == "input_required"  # re-requests what is missing


@pytest.mark.parametrize("answers", [{"ok": 12345}, None])
def test_malformed_answers_are_errors(client: Client, answers: Any) -> None:
    reply = call(client, 1, "confirm", {"action": "x"}, inputResponses=answers)
    assert reply["error"]["code"] == -32602


def test_only_mrtr_methods_return_input_required(client: Client) -> None:
    for rid, method in enumerate(
        ["tools/list", "prompts/list", "resources/list", "server/discover"]
    ):
        r = client.reply(request(rid, method, caps=ALL))
        assert r is not None and r["result"]["resultType"] == "complete"


def test_multi_round_and_state_only_rounds() -> None:
    srv = Server("m")

    @srv.tool
    def wizard(ctx: Context) -> Any:
        step = ctx.state or 0
        if step < 2:
            return InputRequired(
                {f"q{step}": elicit_form(f"Q{step}", {"type": "object", "properties": {}})},
                state=step + 1,
            )
        return f"done after {step}"

    @srv.tool
    def shed(ctx: Context) -> Any:
        return "served" if ctx.state == "retry" else InputRequired(state="retry")

    c = Client(srv)
    r1 = call(c, 1, "wizard", {})["result"]
    r2 = call(
        c,
        2,
        "wizard",
        {},
        requestState=r1["requestState"],
        inputResponses={"q0": {"action": "accept"}},
    )["result"]
    assert r2["requestState"] != r1["requestState"] and "q1" in r2["inputRequests"]
    r3 = call(
        c,
        3,
        "wizard",
        {},
        requestState=r2["requestState"],
        inputResponses={"q1": {"action": "accept"}},
    )["result"]
    assert r3["content"][0]["text"] == "done after 2"
    s1 = call(c, 4, "shed", {})["result"]
    assert "inputRequests" not in s1 and s1["requestState"]
    assert (
        call(c, 5, "shed", {}, requestState=s1["requestState"])["result"]["content"][0]["text"]
        == "served"
    )


def test_prompts_and_resources_can_ask_too() -> None:
    srv = Server("p")

    @srv.prompt
    def interview(ctx: Context) -> Any:
        name = ctx.input("name")
        if name is None:
            return InputRequired(
                {
                    "name": elicit_form(
                        "Name?", {"type": "object", "properties": {"n": {"type": "string"}}}
                    )
                }
            )
        return f"Interview {name.content['n']}"

    c = Client(srv)
    first = c.reply(request(1, "prompts/get", {"name": "interview"}, caps=ALL))["result"]  # type: ignore[index]
    assert first["resultType"] == "input_required"
    done = c.reply(
        request(
            2,
            "prompts/get",
            {
                "name": "interview",
                "requestState": first["requestState"],
                "inputResponses": {"name": {"action": "accept", "content": {"n": "Ada"}}},
            },
            caps=ALL,
        )
    )
    assert done["result"]["messages"][0]["content"]["text"] == "Interview Ada"  # type: ignore[index]


# -- legacy sessions: the same handler, real server-to-client requests --------------------------
def test_legacy_bridge_elicitation(client: Client) -> None:
    client.initialize(caps={"elicitation": {}})
    out = client.settled(
        request(7, "tools/call", {"name": "confirm", "arguments": {"action": "wipe"}}, modern=False)
    )
    from mcpgen._server import DEFERRED

    assert out is DEFERRED
    (outbound,) = client.channel.take("request")
    assert (
        outbound["method"] == "elicitation/create"
        and outbound["params"]["message"] == "Really wipe?"
    )
    assert (
        client.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": outbound["id"],
                    "result": {"action": "accept", "content": {"sure": True}},
                }
            ).encode()
        )
        is None
    )
    (final,) = client.channel.take("reply")
    assert (
        final["id"] == 7 and final["result"]["content"][0]["text"] == "accept:wipe:{'sure': True}"
    )
    assert "resultType" not in final["result"]


def test_legacy_bridge_several_requests_async_handler(client: Client) -> None:
    client.initialize(caps={"elicitation": {"url": {}}, "sampling": {}, "roots": {}})

    async def run() -> None:
        out = await client.areply(
            request(
                8, "tools/call", {"name": "research", "arguments": {"topic": "x"}}, modern=False
            )
        )
        from mcpgen._server import DEFERRED

        assert out is DEFERRED
        outbound = {f["method"]: f for f in client.channel.take("request")}
        assert set(outbound) == {"roots/list", "sampling/createMessage", "elicitation/create"}
        assert outbound["elicitation/create"]["params"]["elicitationId"]  # 2025-11-25 URL mode
        answers = {
            "roots/list": {"roots": [{"uri": "file:///r"}]},
            "sampling/createMessage": {
                "role": "assistant",
                "content": {"type": "text", "text": "hi"},
                "model": "m",
            },
            "elicitation/create": {"action": "accept"},
        }
        for method, frame in outbound.items():
            client.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": frame["id"], "result": answers[method]}
                ).encode()
            )
        await asyncio.gather(*client.channel.tasks)
        (final,) = client.channel.take("reply")
        assert final["result"]["content"][0]["text"] == "1 roots; model said hi; login accept"

    asyncio.run(run())


def test_legacy_bridge_client_error_and_missing_capability(client: Client) -> None:
    client.initialize(caps={})
    missing = client.reply(
        request(1, "tools/call", {"name": "confirm", "arguments": {"action": "x"}}, modern=False)
    )
    assert (
        missing is not None
        and missing["error"]["code"] == -32602
        and "elicitation" in missing["error"]["message"]
    )
    client.initialize(caps={"elicitation": {}})
    client.settled(
        request(2, "tools/call", {"name": "confirm", "arguments": {"action": "x"}}, modern=False)
    )
    (outbound,) = client.channel.take("request")
    client.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": outbound["id"],
                "error": {"code": -1, "message": "user closed"},
            }
        ).encode()
    )
    (final,) = client.channel.take("reply")
    assert final["id"] == 2 and "user closed" in final["error"]["message"]


def test_sampling_downgrades_for_older_sessions() -> None:
    srv = Server("s")

    @srv.tool
    def ask(ctx: Context) -> Any:
        if ctx.input("a") is None:
            return InputRequired({"a": sample("hi", 10, temperature=0.5)})
        return ctx.input("a").model

    c = Client(srv)
    c.initialize("2025-03-26", caps={"sampling": {}})
    c.settled(request(1, "tools/call", {"name": "ask"}, modern=False))
    (outbound,) = c.channel.take("request")
    assert outbound["params"] == {
        "messages": [{"content": {"type": "text", "text": "hi"}, "role": "user"}],
        "maxTokens": 10,
        "temperature": 0.5,
    }
