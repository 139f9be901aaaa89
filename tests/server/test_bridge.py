"""The legacy bridge's replies: errors from a handler run again after an input round,
from a client that refuses a request, and from too many rounds, all well-formed (no
`"data": null`, generated codes)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpgen import Context, InputRequired, McpError, Server, elicit_form
from mcpgen._server import DEFERRED, Pending
from mcpgen._server._bridge import MAX_ROUNDS
from tests.server.harness import Client, request

FORM = {"type": "object", "properties": {"sure": {"type": "boolean"}}}


def make_client() -> Client:
    server = Server("bridge")

    @server.tool
    def picky(ctx: Context) -> Any:
        if ctx.input("ok") is None:
            return InputRequired({"ok": elicit_form("Sure?", FORM)})
        raise McpError(-32602, "not like that")

    @server.tool
    async def endless(ctx: Context) -> Any:
        return InputRequired({"again": elicit_form("Once more?", FORM)}, state=ctx.state)

    client = Client(server)
    client.initialize(caps={"elicitation": {}})
    return client


def ask(client: Client, rid: int, tool: str) -> dict[str, Any]:
    """Call `tool` in the legacy session; returns the elicitation request it sent."""
    out = client.settled(request(rid, "tools/call", {"name": tool, "arguments": {}}, modern=False))
    assert out is DEFERRED  # the reply comes once the client has answered
    (frame,) = client.channel.take("request")
    assert frame["method"] == "elicitation/create"
    return frame


def answer(client: Client, rid: int, **body: Any) -> None:
    client.send(json.dumps({"jsonrpc": "2.0", "id": rid, **body}).encode())


def test_a_handler_error_after_an_input_round_has_no_null_data() -> None:
    client = make_client()
    frame = ask(client, 1, "picky")
    answer(client, frame["id"], result={"action": "accept", "content": {"sure": True}})
    (reply,) = client.channel.take("reply")
    assert reply == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32602, "message": "not like that"},
    }


def test_a_refused_input_request_fails_the_call_without_null_data() -> None:
    client = make_client()
    frame = ask(client, 2, "picky")
    answer(client, frame["id"], error={"code": -1, "message": "user closed the dialog"})
    (reply,) = client.channel.take("reply")
    assert reply["id"] == 2
    assert reply["error"] == {
        "code": -32603,
        "message": "the client did not answer elicitation/create: -1: user closed the dialog",
    }


def test_too_many_rounds_end_the_call() -> None:
    client = make_client()

    async def run() -> None:
        out = client.send(request(3, "tools/call", {"name": "endless"}, modern=False))
        assert isinstance(out, Pending)  # an async handler
        assert await out.coro is DEFERRED
        for _ in range(MAX_ROUNDS):
            (frame,) = client.channel.take("request")
            answer(client, frame["id"], result={"action": "accept", "content": {}})
            while client.channel.tasks:  # the call resumes in a task of its own
                await client.channel.tasks.pop()

    asyncio.run(run())
    assert client.channel.take("request") == []
    (reply,) = client.channel.take("reply")
    assert reply == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32603, "message": "too many input rounds"},
    }
