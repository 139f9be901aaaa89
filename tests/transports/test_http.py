"""Streamable HTTP under uvicorn on a loopback port, with a real streaming client."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen import Context, Server
from tests.server.conftest import build_server
from tests.transports.httpharness import MODERN, body, iter_sse, modern_headers, serve, sse_events

CANCELLED = threading.Event()


def make_server() -> Server:
    server = build_server()

    @server.tool
    async def hang(ctx: Context) -> str:
        ctx.progress(1, 2)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            CANCELLED.set()
            raise
        return "never"

    @server.tool
    def trigger() -> str:
        server.notify_tools_changed()
        return "triggered"

    return server


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    app = make_server().asgi_app(keepalive_seconds=0.3)
    with serve(app) as (address, _):
        yield address


def post(
    http: httpx.Client, url: str, data: bytes, method: str, name: str | None = None, **h: str
) -> httpx.Response:
    return http.post(url, content=data, headers=modern_headers(method, name, **h))


# -- modern status mapping ---------------------------------------------------------------------
STATUS_CASES = [
    ("parse error", b"{nope", "tools/list", None, 400, -32700),
    ("missing _meta", body(1, "tools/list", meta=False), "tools/list", None, 400, -32602),
    (
        "unsupported version",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {"_meta": {**MODERN, "io.modelcontextprotocol/protocolVersion": "v999"}},
            }
        ).encode(),
        "tools/list",
        {"mcp-protocol-version": "v999"},
        400,
        -32022,
    ),
    ("header mismatch", body(1, "tools/list"), "prompts/list", None, 400, -32020),
    (
        "missing capability",
        body(1, "tools/call", {"name": "confirm", "arguments": {"action": "x"}}),
        "tools/call",
        {"mcp-name": "confirm"},
        400,
        -32021,
    ),
    ("unknown method", body(1, "nope/nope"), "nope/nope", None, 404, -32601),
    ("legacy-only method", body(1, "ping"), "ping", None, 404, -32601),
    (
        "unknown tool",
        body(1, "tools/call", {"name": "nope"}),
        "tools/call",
        {"mcp-name": "nope"},
        200,
        -32602,
    ),
    ("a result", body(1, "tools/list"), "tools/list", None, 200, None),
]


@pytest.mark.parametrize(
    ("case", "data", "method", "extra", "status", "code"),
    STATUS_CASES,
    ids=[c[0] for c in STATUS_CASES],
)
def test_status_mapping(
    http: httpx.Client,
    url: str,
    case: str,
    data: bytes,
    method: str,
    extra: dict[str, str] | None,
    status: int,
    code: int | None,
) -> None:
    r = post(http, url, data, method, **(extra or {}))
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    reply = r.json()
    if code is None:
        assert "result" in reply
    else:
        assert reply["error"]["code"] == code
        if data.startswith(b'{"jsonrpc'):
            assert reply["id"] == 1
    assert "mcp-session-id" not in r.headers  # modern requests never mint sessions


def test_notifications_are_accepted(http: httpx.Client, url: str) -> None:
    note = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    ).encode()
    r = http.post(url, content=note, headers=modern_headers("notifications/cancelled"))
    assert r.status_code == 202 and r.content == b""


def test_mirrored_headers_base64_and_params(http: httpx.Client, url: str) -> None:
    ok = post(
        http,
        url,
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
        "tools/call",
        "=?base64?ZWNobw==?=",
    )
    assert ok.status_code == 200 and ok.json()["result"]["content"][0]["text"] == "x"
    bad = post(
        http,
        url,
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
        "tools/call",
        "=?base64?ZWNobw?=",
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020
    upper = http.post(
        url,
        content=body(2, "tools/list"),
        headers={k.upper(): v for k, v in modern_headers("tools/list").items()},
    )
    assert upper.status_code == 200  # header names are case-insensitive


def test_sse_carries_notifications_before_the_result(http: httpx.Client, url: str) -> None:
    r = post(
        http,
        url,
        body(1, "tools/call", {"name": "steps", "arguments": {"count": 3}}, progressToken="p"),
        "tools/call",
        "steps",
    )
    assert r.headers["content-type"] == "text/event-stream"
    assert "id:" not in r.text  # modern streams are not resumable: no event ids
    events = sse_events(r.text)
    assert [e.get("method", "result") for e in events] == ["notifications/progress"] * 3 + [
        "result"
    ]
    assert events[-1]["id"] == 1 and events[-1]["result"]["content"][0]["text"] == "3 steps"


def test_json_when_nothing_is_emitted(http: httpx.Client, url: str) -> None:
    r = post(
        http,
        url,
        body(1, "tools/call", {"name": "steps", "arguments": {"count": 1}}),
        "tools/call",
        "steps",
    )
    assert r.headers["content-type"] == "application/json"
    assert r.json()["result"]["content"][0]["text"] == "1 steps"


def test_client_disconnect_cancels_the_request(url: str) -> None:
    CANCELLED.clear()
    with (
        httpx.Client(timeout=10) as client,
        client.stream(
            "POST",
            url,
            content=body(1, "tools/call", {"name": "hang"}, progressToken=1),
            headers=modern_headers("tools/call", "hang"),
        ) as r,
    ):
        events = iter_sse(r)
        _, first = next(e for e in events if e[0] == "event")
        assert first["method"] == "notifications/progress"
    assert CANCELLED.wait(5), "closing the stream did not cancel the handler"


def test_listen_keepalive_filter_and_tags(http: httpx.Client, url: str) -> None:
    with httpx.Client(timeout=10) as streamer:
        listen = body("L1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        with streamer.stream(
            "POST", url, content=listen, headers=modern_headers("subscriptions/listen")
        ) as r:
            assert r.headers["content-type"] == "text/event-stream"
            assert r.headers.get("x-accel-buffering") == "no"
            events = iter_sse(r)
            _kind, ack = next(e for e in events if e[0] == "event")
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"
            assert next(e for e in events if e[0] == "comment" and e[1] == "keep-alive")
            post(http, url, body(2, "tools/call", {"name": "trigger"}), "tools/call", "trigger")
            _, changed = next(e for e in events if e[0] == "event")
            assert changed["method"] == "notifications/tools/list_changed"
            assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L1"


def test_listen_streams_get_a_final_result_on_shutdown() -> None:
    with serve(make_server().asgi_app(keepalive_seconds=5)) as (address, uv):
        got: list[Any] = []

        def listen() -> None:
            with (
                httpx.Client(timeout=20) as c,
                c.stream(
                    "POST",
                    address,
                    content=body(
                        9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
                    ),
                    headers=modern_headers("subscriptions/listen"),
                ) as r,
            ):
                got.extend(e for e in iter_sse(r) if e[0] == "event")

        reader = threading.Thread(target=listen)
        reader.start()
        time.sleep(0.5)
        uv.should_exit = True
        reader.join(15)
    methods = [e[1].get("method", "result") for e in got]
    assert methods == ["notifications/subscriptions/acknowledged", "result"]
    final = got[-1][1]
    assert (
        final["id"] == 9 and final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9
    )


# -- security and HTTP-level errors ---------------------------------------------------------------
def test_dns_rebinding_and_origin_checks(http: httpx.Client, url: str) -> None:
    data = body(1, "server/discover")
    evil = post(
        http,
        url,
        data,
        "server/discover",
        host="evil.example.com",
        origin="http://evil.example.com",
    )
    assert evil.status_code == 403
    assert (
        post(http, url, data, "server/discover", origin="http://evil.example.com").status_code
        == 403
    )
    port = url.split(":")[2].split("/", maxsplit=1)[0]
    fine = post(
        http,
        url,
        data,
        "server/discover",
        host=f"localhost:{port}",
        origin=f"http://localhost:{port}",
    )
    assert fine.status_code == 200


def test_http_level_errors(http: httpx.Client, url: str) -> None:
    data = body(1, "tools/list")
    assert http.put(url, content=data).status_code == 405
    assert http.get(url).status_code == 405  # no session: no standalone stream
    assert http.delete(url).status_code == 405
    assert post(http, url, data, "tools/list", accept="text/html").status_code == 406
    assert post(http, url, data, "tools/list", **{"content-type": "text/plain"}).status_code == 415
    assert http.post(url.replace("/mcp", "/other"), content=data).status_code == 404


def test_body_cap() -> None:
    with (
        serve(make_server().asgi_app(max_body=2048)) as (address, _),
        httpx.Client(timeout=10) as c,
    ):
        big = body(1, "tools/call", {"name": "echo", "arguments": {"text": "x" * 4096}})
        r = c.post(address, content=big, headers=modern_headers("tools/call", "echo"))
        assert r.status_code == 413
        small = body(2, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
        assert (
            c.post(address, content=small, headers=modern_headers("tools/call", "echo")).status_code
            == 200
        )
