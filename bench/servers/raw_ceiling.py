"""The raw ceiling: a server that only parses each JSON-RPC message and writes a canned
reply carrying the request's id. No validation, no dispatch, no handler: what Python
itself costs on this machine for the same wire traffic.

    python bench/servers/raw_ceiling.py stdio
    python bench/servers/raw_ceiling.py http --host 127.0.0.1 --port 8000

stdio: asyncio pipe transports (on uvloop when it is installed, as mcpgen's stdio
does), ``json.loads`` of each line, one write per burst of lines. HTTP: a bare ASGI 3
app (``json.loads`` of the body, canned JSON reply) under one uvicorn worker with the
same ``uvicorn.Config`` options as mcpgen's ``server.run(transport="http")``.

Canned replies: ``tools/call`` -> ``{"content": [{"type": "text", "text": "hello"}]}``
(what the suite sends to ``echo``), ``tools/list`` -> the 100 tool definitions of
``_surface.py`` (the era from the request's ``_meta``), ``initialize`` -> a 2025-11-25
result (HTTP: with an ``Mcp-Session-Id``); notifications get nothing (HTTP: 202).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _surface
from _surface import (
    MODERN_VERSION,
    SERVER_NAME,
    SERVER_VERSION,
    compact,
    tool_definitions,
)

_META_KEY = "io.modelcontextprotocol/protocolVersion"
_INFO = {"name": SERVER_NAME, "version": SERVER_VERSION}
_MODERN_META = {"io.modelcontextprotocol/serverInfo": _INFO}


def _results() -> dict[tuple[str, bool], bytes]:
    """Canned ``result`` JSON per (method, modern era)."""
    text = {"content": [{"type": "text", "text": "hello"}]}
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": _INFO,
    }
    done = {"_meta": _MODERN_META, "resultType": "complete"}
    return {
        ("tools/call", True): compact({**done, **text}),
        ("tools/call", False): compact(text),
        ("tools/list", True): compact({**done, "tools": tool_definitions(modern=True)}),
        ("tools/list", False): compact({"tools": tool_definitions(modern=False)}),
        ("initialize", False): compact(initialize),
        ("initialize", True): compact(initialize),
    }


RESULTS = _results()
NOT_FOUND = b'"error":{"code":-32601,"message":"method not found"}}'


def reply(message: Any) -> bytes | None:
    """The canned reply line (no newline) to one parsed message; None for a notification."""
    if "id" not in message:
        return None
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b","
    params = message.get("params") or {}
    modern = _META_KEY in (params.get("_meta") or {})
    result = RESULTS.get((message.get("method"), modern))
    if result is None:
        return head + NOT_FOUND
    return head + b'"result":' + result + b"}"


# ------------------------------------------------------------------------------------ stdio


class _Lines(asyncio.Protocol):
    def __init__(self, out: asyncio.WriteTransport, done: asyncio.Future[None]) -> None:
        self.out = out
        self.done = done
        self.buffer = bytearray()

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        replies = []
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end])
            start = end + 1
            if line.strip():
                answer = reply(json.loads(line))
                if answer is not None:
                    replies.append(answer)
        del buffer[:start]
        if replies:
            self.out.write(b"\n".join(replies) + b"\n")

    def eof_received(self) -> bool | None:
        if not self.done.done():
            self.done.set_result(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def serve_stdio() -> None:
    loop = asyncio.get_running_loop()
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    done: asyncio.Future[None] = loop.create_future()
    reader, _ = await loop.connect_read_pipe(lambda: _Lines(out, done), sys.stdin)
    await done
    reader.close()
    out.close()


def run_stdio() -> None:
    try:
        import uvloop  # noqa: PLC0415 (optional, as in mcpgen)
    except ImportError:
        asyncio.run(serve_stdio())
    else:
        uvloop.run(serve_stdio())


# ------------------------------------------------------------------------------------- HTTP

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        event = await receive()
        body += event.get("body", b"")
        more = event.get("more_body", False)
    message = json.loads(body)
    answer = reply(message)
    if answer is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(answer))]
    if message.get("method") == "initialize":
        headers.append((b"mcp-session-id", b"ceiling"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


def main() -> None:
    _surface.main(__doc__, stdio=run_stdio, http_app=lambda host: app)


if __name__ == "__main__":
    assert MODERN_VERSION  # the era key above is this revision's
    main()
