"""Frames no decoder can read (nested too deeply, not UTF-8) are parse errors on every
transport, and a modern request ignores a stale `Mcp-Session-Id` (issue 11, item 5)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen.transports import McpAsgiApp
from tests.server.conftest import build_server
from tests.server.harness import Client, request
from tests.transports.httpharness import body, modern_headers, rpc, serve
from tests.transports.test_http_sse_legacy import Stream, connect

DEEP = b"[" * 10_000 + b"]" * 10_000
CALL = request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
# Where a frame hides what no decoder can read: each is a whole request otherwise.
DEEP_FRAMES = {
    "argument": CALL.replace(b'"hi"', DEEP),
    "id": CALL.replace(b'"id": 1', b'"id": ' + DEEP),
    "unknown member": CALL.replace(b'"jsonrpc"', b'"x": ' + DEEP + b', "jsonrpc"'),
}
NOT_UTF8 = {
    "argument": CALL.replace(b'"hi"', b'"h\xffi"'),
    "unknown param": CALL.replace(b'"name"', b'"x": "\xc3\x28", "name"'),
    "unknown member": CALL.replace(b'"jsonrpc"', b'"x": "\xed\xa0\x80", "jsonrpc"'),
    "meta": CALL.replace(b'"test"', b'"te\xffst"'),
    "method": CALL.replace(b'"tools/call"', b'"tools/c\xe9all"'),
}
BAD = {f"deep {k}": v for k, v in DEEP_FRAMES.items()}
BAD.update({f"utf-8 {k}": v for k, v in NOT_UTF8.items()})


def _parse_error(reply: Any) -> None:
    assert reply["error"]["code"] == -32700, reply
    assert "id" not in reply  # nothing of the frame can be trusted, its id included


@pytest.mark.parametrize("frame", list(BAD.values()), ids=list(BAD))
def test_the_core_answers_a_parse_error_with_status_400(frame: bytes) -> None:
    client = Client(build_server())
    out = client.send(frame)
    assert out.status == 400
    _parse_error(json.loads(out))
    assert client.reply(CALL)["result"]["content"][0]["text"] == "hi"  # and serves on


def test_legacy_requests_and_batch_members_too() -> None:
    client = Client(build_server())
    client.initialize("2025-03-26")
    legacy = rpc(7, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    _parse_error(client.reply(legacy.replace(b'"hi"', b'"\xff"')))
    _parse_error(client.reply(legacy.replace(b'"hi"', DEEP)))
    _parse_error(client.reply(b"[" + legacy + b"," + legacy.replace(b'"hi"', DEEP) + b"]"))
    replies = client.reply(b"[" + legacy + b"," + legacy.replace(b'"hi"', b'"\xff"') + b"]")
    assert replies[0]["result"]["content"][0]["text"] == "hi"
    _parse_error(replies[1])


def test_valid_utf8_is_still_served() -> None:
    client = Client(build_server())
    text = "h\u00e9 \u2603 \U0001f600"
    frame = request(1, "tools/call", {"name": "echo", "arguments": {"text": text}})
    frame = frame.replace(json.dumps(text).encode(), json.dumps(text, ensure_ascii=False).encode())
    assert not frame.isascii()
    assert client.reply(frame)["result"]["content"][0]["text"] == text


# -- stdio: a real subprocess ------------------------------------------------------------------
def test_stdio_answers_parse_errors_and_goes_on() -> None:
    server = Path(__file__).parents[1] / "transports" / "stdio_server.py"
    proc = subprocess.Popen(
        [sys.executable, str(server)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    frames = list(BAD.values())
    try:
        out, _ = proc.communicate(b"\n".join([*frames, CALL]) + b"\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    replies = [json.loads(line) for line in out.splitlines()]
    assert len(replies) == len(frames) + 1
    for reply in replies[:-1]:
        _parse_error(reply)
    assert replies[-1]["id"] == 1 and replies[-1]["result"]["content"][0]["text"] == "hi"


# -- Streamable HTTP and HTTP+SSE under uvicorn ----------------------------------------------------
@pytest.fixture(scope="module")
def app() -> McpAsgiApp:
    return build_server().asgi_app(keepalive_seconds=0.3)


@pytest.fixture(scope="module")
def url(app: McpAsgiApp) -> Iterator[str]:
    with serve(app) as (address, _):
        yield address


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


@pytest.mark.parametrize("frame", list(BAD.values()), ids=list(BAD))
def test_http_answers_400_with_a_parse_error(http: httpx.Client, url: str, frame: bytes) -> None:
    r = http.post(url, content=frame, headers=modern_headers("tools/call", "echo"))
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("application/json")
    _parse_error(r.json())


def test_http_answers_a_deep_batch_with_400(http: httpx.Client, url: str) -> None:
    r = http.post(url, content=DEEP, headers=modern_headers("tools/call", "echo"))
    assert r.status_code == 400 and r.json()["error"]["code"] in (-32700, -32600)


def test_http_sse_answers_parse_errors(http: httpx.Client, url: str) -> None:
    stream = Stream(url.removesuffix("/mcp"))
    try:
        messages = connect(http, stream)
        legacy = rpc(5, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        for frame in (legacy.replace(b'"hi"', b'"\xff"'), legacy.replace(b'"hi"', DEEP)):
            r = http.post(messages, content=frame, headers={"content-type": "application/json"})
            assert r.status_code == 400
            _parse_error(r.json())
            _parse_error(stream.next())
        r = http.post(messages, content=legacy, headers={"content-type": "application/json"})
        assert r.status_code == 202
        assert stream.next()["result"]["content"][0]["text"] == "hi"
    finally:
        stream.close()


# -- a stale Mcp-Session-Id on a modern request ----------------------------------------------
def _legacy_session(http: httpx.Client, url: str) -> str:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    headers = {"content-type": "application/json", "accept": "application/json"}
    r = http.post(url, content=rpc(0, "initialize", params), headers=headers)
    assert r.status_code == 200
    return r.headers["mcp-session-id"]


ECHO = body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})


def test_modern_requests_ignore_a_stale_session_id(http: httpx.Client, url: str) -> None:
    headers = modern_headers("tools/call", "echo", **{"mcp-session-id": "gone-long-ago"})
    r = http.post(url, content=ECHO, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["content"][0]["text"] == "hi"
    assert "mcp-session-id" not in r.headers
    # Without its version header the request is still modern (by its `_meta`): the core
    # answers it, saying what is missing, instead of the transport's 404.
    del headers["mcp-protocol-version"]
    r = http.post(url, content=ECHO, headers=headers)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020, r.text
    assert "header is required" in r.json()["error"]["message"]


def test_legacy_requests_with_a_stale_session_id_still_get_404(
    http: httpx.Client, url: str
) -> None:
    legacy = rpc(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    for version in ({}, {"mcp-protocol-version": "2025-11-25"}):
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "mcp-session-id": "gone-long-ago",
            **version,
        }
        r = http.post(url, content=legacy, headers=headers)
        assert r.status_code == 404 and r.json()["error"]["code"] == -32600
        r = http.post(url, content=DEEP, headers=headers)  # undecodable: no era to see
        assert r.status_code == 404


def test_a_modern_request_on_a_live_session_id_is_stateless(
    http: httpx.Client, url: str, app: McpAsgiApp
) -> None:
    session_id = _legacy_session(http, url)
    headers = modern_headers("tools/call", "echo", **{"mcp-session-id": session_id})
    r = http.post(url, content=ECHO, headers=headers)
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "hi"
    # The legacy session is untouched and still serves its own requests.
    legacy = rpc(2, "tools/call", {"name": "echo", "arguments": {"text": "old"}})
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
    }
    r = http.post(url, content=legacy, headers=headers)
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "old"
