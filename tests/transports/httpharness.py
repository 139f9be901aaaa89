"""Run an ASGI app under uvicorn on 127.0.0.1:<ephemeral> in a thread; parse SSE."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

from mcpgen.transports import uvicorn_server

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def rpc(rid: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    """A JSON-RPC request (or, with `rid` None, a notification) as bytes."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        msg["id"] = rid
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


@contextlib.contextmanager
def running(server: uvicorn.Server) -> Iterator[str]:
    """Run a uvicorn server (bound to 127.0.0.1, port 0) in a thread until the block
    ends; yields its base URL once it listens."""
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextlib.contextmanager
def serve(app: Any) -> Iterator[tuple[str, uvicorn.Server]]:
    """An mcpgen ASGI app under uvicorn; yields its endpoint URL and the server."""
    server = uvicorn_server(app, "127.0.0.1", 0, log_level="warning", loop="asyncio")
    with running(server) as base:
        yield f"{base}/mcp", server


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    h = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name is not None:
        h["mcp-name"] = name
    h.update(extra)
    return h


def body(
    rid: Any,
    method: str,
    params: dict[str, Any] | None = None,
    meta: bool = True,
    **meta_extra: Any,
) -> bytes:
    p = dict(params or {})
    if meta:
        p["_meta"] = {**MODERN, **meta_extra}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": p}).encode()


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON data of each SSE event (comments and empty priming data skipped)."""
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [ln[5:].lstrip() for ln in block.split("\n") if ln.startswith("data:")]
        if data and any(data):
            out.append(json.loads("\n".join(data)))
    return out


def iter_sse(response: httpx.Response) -> Iterator[tuple[str, Any]]:
    """Yield ("comment", text), ("event", json) or ("priming", id) as they arrive."""
    block: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if block:
                yield _parse_block(block)
            block = []
        else:
            block.append(line)


def _parse_block(block: list[str]) -> tuple[str, Any]:
    if all(ln.startswith(":") for ln in block):
        return ("comment", block[0][1:].strip())
    data = "\n".join(ln[5:].lstrip() for ln in block if ln.startswith("data:"))
    if not data:
        return ("priming", [ln for ln in block if ln.startswith(("id:", "retry:"))])
    return ("event", json.loads(data))
