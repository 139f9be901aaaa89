"""A legacy Streamable HTTP call whose handler asks the client for input while the
server has no way to send the request: the POST takes JSON only and the session has no
GET stream. The handler's await fails at once (no wait for its timeout), and the call
answers with that error; once a GET stream is open, the same call is served normally."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen import Context, InputRequired, elicit_form
from tests.server.await_server import build
from tests.stores.redis_server import redis_url
from tests.transports.httpharness import iter_sse, rpc, serve

VERSION = "2025-06-18"
JSON_ONLY = {"content-type": "application/json", "accept": "application/json"}


@pytest.fixture(
    scope="module", params=["memory", pytest.param("redis", marks=pytest.mark.needs_redis)]
)
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The server alone, and one whose legacy streams go through the shared event log."""
    options: dict[str, Any] = {}
    if request.param == "redis":
        options = {"redis": redis_url(), "state_keys": ["k" * 32]}
    server = build(**options)

    @server.tool
    def returns_its_question(ctx: Context) -> Any:
        """Returns its input request (no await): the call's reply waits for the answer."""
        if ctx.input("sure") is None:
            return InputRequired({"sure": elicit_form("Sure?", {"type": "object"})})
        return "confirmed"

    with serve(server.asgi_app()) as (endpoint, _):
        yield endpoint


def open_session(http: httpx.Client, url: str) -> dict[str, str]:
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    r = http.post(url, content=rpc(1, "initialize", params), headers=JSON_ONLY)
    assert r.status_code == 200, r.text
    headers = {
        **JSON_ONLY,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": VERSION,
    }
    r = http.post(url, content=rpc(None, "notifications/initialized"), headers=headers)
    assert r.status_code == 202
    return headers


def call_waits(rid: int) -> bytes:
    # A 60 s elicitation timeout: a server that waited for it would outlast the client's 10 s.
    return rpc(rid, "tools/call", {"name": "waits", "arguments": {"seconds": 60}})


def error_text(reply: dict[str, Any]) -> str:
    if "error" in reply:
        return str(reply["error"]["message"])
    result = reply["result"]
    assert result.get("isError") is True, reply
    return " ".join(c.get("text", "") for c in result["content"])


@pytest.mark.parametrize("returned", [False, True], ids=["awaited", "returned"])
def test_json_only_call_without_get_stream_fails_at_once(url: str, returned: bool) -> None:
    with httpx.Client(timeout=10) as http:
        headers = open_session(http, url)
        call = rpc(2, "tools/call", {"name": "returns_its_question", "arguments": {}})
        r = http.post(url, content=call if returned else call_waits(2), headers=headers)
        # (the old code: no answer before the client's 10 s timeout)
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/json")
        reply = r.json()
        assert reply["id"] == 2
        assert "no stream to it is open" in error_text(reply)
        # the session serves on
        r = http.post(url, content=rpc(3, "tools/list"), headers=headers)
        assert r.status_code == 200 and "tools" in r.json()["result"]


def test_json_only_call_with_get_stream_asks_there(
    url: str, request: pytest.FixtureRequest
) -> None:
    """Alone, the question goes to the GET stream. With a shared event log (Redis) the
    GET stream carries logged events only, so the call fails at once (it waited for its
    timeout: the question was written where nothing reads it)."""
    with httpx.Client(timeout=10) as http:
        headers = open_session(http, url)
        if request.node.callspec.params["url"] == "redis":
            get = {**headers, "accept": "text/event-stream"}
            with httpx.Client(timeout=10) as side, side.stream("GET", url, headers=get) as s:
                assert s.status_code == 200
                reply = http.post(url, content=call_waits(2), headers=headers).json()
            assert "no stream to it is open" in reply["error"]["message"], reply
            return
        asked: list[dict[str, Any]] = []
        ready = threading.Event()
        opened = threading.Event()

        def listen() -> None:
            get = {**headers, "accept": "text/event-stream"}
            with httpx.Client(timeout=10) as side, side.stream("GET", url, headers=get) as s:
                assert s.status_code == 200
                opened.set()
                for _, data in iter_sse(s):
                    if isinstance(data, dict) and data.get("method") == "elicitation/create":
                        asked.append(data)
                        ready.set()
                        return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert opened.wait(10)
        answer: dict[str, Any] = {}

        def respond() -> None:
            assert ready.wait(10)
            result = {"action": "accept", "content": {"name": "Ada"}}
            frame = {"jsonrpc": "2.0", "id": asked[0]["id"], "result": result}
            with httpx.Client(timeout=10) as side:
                r = side.post(url, content=json.dumps(frame).encode(), headers=headers)
                answer["status"] = r.status_code

        responder = threading.Thread(target=respond, daemon=True)
        responder.start()
        r = http.post(url, content=call_waits(2), headers=headers)
        responder.join(10)
        thread.join(10)
        assert answer["status"] == 202
        reply = r.json()
        assert reply["id"] == 2 and reply["result"]["content"][0]["text"] == "accept", reply
