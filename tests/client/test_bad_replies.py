"""A server's frames the client cannot decode (nested too deeply, not JSON, not UTF-8)
end in a clear error or a logged drop, never in an exception inside the reader, and the
connection goes on serving (issue 11, item 5)."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from mcpgen import Client, ProtocolViolationError, TransportTimeoutError
from tests.transports.httpharness import running

SERVER = [sys.executable, str(Path(__file__).with_name("bad_reply_server.py"))]
DEEP = b"[" * 100_000 + b"]" * 100_000


def _text(result: Any) -> str:
    text: str = result.content[0].text
    return text


class _LoopErrors:
    """Whatever reaches the event loop's exception handler (it must stay empty)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: self.seen.append(ctx))


@pytest.mark.parametrize("kind", ["deep", "garbage", "utf8"])
def test_stdio_drops_an_undecodable_frame_with_a_warning(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        errors = _LoopErrors()
        caplog.set_level(logging.WARNING, "mcpgen.client")
        async with Client.stdio(SERVER, era="modern", timeout=10) as client:
            started = time.monotonic()
            assert _text(await client.call_tool(kind, {})) == "ok"  # the answer after it
            assert time.monotonic() - started < 5
            assert _text(await client.call_tool("plain", {})) == "ok"
        dropped = [
            r for r in caplog.records if r.name == "mcpgen.client" and "dropped" in r.message
        ]
        assert len(dropped) == 1 and dropped[0].levelno == logging.WARNING
        assert errors.seen == []

    asyncio.run(main())


def test_stdio_a_lost_answer_times_out_and_the_reader_lives_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        errors = _LoopErrors()
        caplog.set_level(logging.WARNING, "mcpgen.client")
        async with Client.stdio(SERVER, era="modern", timeout=10) as client:
            with pytest.raises(TransportTimeoutError):
                await client.call_tool("deep-only", {}, timeout=1)
            assert _text(await client.call_tool("plain", {})) == "ok"
        assert any("dropped" in r.message for r in caplog.records)
        assert errors.seen == []

    asyncio.run(main())


# -- HTTP: a JSON body is the answer to its request ---------------------------------------------
BODIES = {
    "deep": b'{"jsonrpc":"2.0","id":%d,"result":' + DEEP + b"}",
    "garbage": b"this is not JSON",
    "utf8": b'{"jsonrpc":"2.0","x":"\xff","id":%d,"result":{"content":[]}}',
    "no answer": b'{"jsonrpc":"2.0","method":"notifications/message","params":{}}',
}


def _ok(rid: object) -> bytes:
    result = {"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    raw = b""
    while True:
        message = await receive()
        raw += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = json.loads(raw) if raw else {}
    rid, name = request.get("id"), (request.get("params") or {}).get("name")
    if rid is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    if request.get("method") == "tools/list":  # asked first, for the mirrored headers
        tools = [{"name": n, "inputSchema": {"type": "object"}} for n in [*BODIES, "sse-utf8"]]
        result = {"tools": tools, "resultType": "complete"}
        content, ctype = (
            json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode(),
            b"application/json",
        )
    elif name == "sse-utf8":  # a stream: a bad event, then the answer
        bad = BODIES["utf8"].replace(b"%d", str(rid).encode())
        content = b"data: " + bad + b"\n\ndata: " + _ok(rid) + b"\n\n"
        ctype = b"text/event-stream"
    else:
        ctype = b"application/json"
        content = BODIES[name].replace(b"%d", str(rid).encode()) if name in BODIES else _ok(rid)
    headers = [(b"content-type", ctype)]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": content})


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    config = uvicorn.Config(_app, "127.0.0.1", 0, log_level="warning", lifespan="off")
    with running(uvicorn.Server(config)) as base:
        yield base + "/mcp"


@pytest.mark.parametrize("kind", list(BODIES))
def test_http_a_body_that_answers_nothing_fails_its_request_at_once(url: str, kind: str) -> None:
    async def main() -> None:
        errors = _LoopErrors()
        async with Client.http(url, era="modern", timeout=10) as client:
            started = time.monotonic()
            with pytest.raises(ProtocolViolationError, match="answers no request"):
                await client.call_tool(kind, {})
            assert time.monotonic() - started < 5
            assert _text(await client.call_tool("plain", {})) == "ok"
        assert errors.seen == []

    asyncio.run(main())


def test_http_a_stream_drops_an_event_that_is_not_utf8(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        caplog.set_level(logging.WARNING, "mcpgen.client")
        async with Client.http(url, era="modern", timeout=10) as client:
            assert _text(await client.call_tool("sse-utf8", {})) == "ok"
        assert any("dropped" in r.message for r in caplog.records)

    asyncio.run(main())
