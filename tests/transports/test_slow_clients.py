"""Slow clients against a real uvicorn on 127.0.0.1, with raw sockets: headers that
never finish (slowloris), a body that trickles in, an idle keep-alive connection, and
headers without end are all cut off after the configured time or size, while a normal
client is served alongside them. Short limits are configured for the test; every
loop is bounded in connections (50) and time."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from mcpgen import Server
from mcpgen.transports import HttpOptions, McpAsgiApp, uvicorn_server
from tests.server.conftest import build_server
from tests.transports.httpharness import running

CONNECTIONS = 50
LIMIT = 1.0  # seconds: each timeout under test
PATIENCE = 8.0  # seconds: the longest a test waits for the server to act


@pytest.fixture(params=["httptools", "h11"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[int, object]]:
    options = HttpOptions(
        header_timeout_seconds=LIMIT,
        body_timeout_seconds=LIMIT,
        idle_connection_seconds=LIMIT,
        max_header_bytes=8 * 1024,
    )
    app = McpAsgiApp(build_server(), options)
    uv = uvicorn_server(
        app, "127.0.0.1", 0, log_level="critical", loop="asyncio", http=request.param
    )
    with running(uv) as base:
        yield int(base.rsplit(":", 1)[1]), uv


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    return sock


def _open_count(uv: object) -> int:
    return len(uv.server_state.connections)  # type: ignore[attr-defined]


def _read_until_closed(
    socks: list[socket.socket], trickle: bytes | None, silent: int = 0
) -> dict[int, bytes]:
    """Read every socket until the server closes it (or PATIENCE runs out), sending
    `trickle` every 0.25 s to each open one but the first `silent`; returns what each
    received, by index."""
    got = dict.fromkeys(range(len(socks)), b"")
    open_ = dict(enumerate(socks))
    deadline = time.monotonic() + PATIENCE
    next_trickle = time.monotonic() + 0.25
    while open_ and time.monotonic() < deadline:
        readable, _, _ = select.select(list(open_.values()), [], [], 0.05)
        for sock in readable:
            index = next(i for i, s in open_.items() if s is sock)
            try:
                data = sock.recv(65536)
            except (ConnectionResetError, BlockingIOError):
                data = b""
            if data:
                got[index] += data
            else:
                del open_[index]
        if trickle is not None and time.monotonic() >= next_trickle:
            next_trickle += 0.25
            for index, sock in open_.items():
                if index >= silent:
                    with contextlib.suppress(OSError):
                        sock.send(trickle)
    assert not open_, f"{len(open_)} slow connections still open after {PATIENCE} s"
    return got


def _closing(socks: list[socket.socket]) -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    for sock in socks:
        stack.enter_context(sock)
    return stack


def test_headers_that_never_finish_are_cut_off(server: tuple[int, object]) -> None:
    port, uv = server
    socks = [_connect(port) for _ in range(CONNECTIONS)]
    with _closing(socks):
        silent = CONNECTIONS // 2  # these say nothing at all, the others start a request
        for sock in socks[silent:]:
            sock.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        # a normal client is served while they hang on
        with httpx.Client(timeout=5) as http:
            assert http.get(f"http://127.0.0.1:{port}/elsewhere").status_code == 404
        got = _read_until_closed(socks, b"X-Slow: 1\r\n", silent)
        took = time.monotonic() - started
    assert LIMIT * 0.8 <= took <= PATIENCE
    assert all(data.startswith(b"HTTP/1.1 408") for data in got.values()), set(got.values())
    deadline = time.monotonic() + 2
    while _open_count(uv) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _open_count(uv) == 0


@pytest.mark.slow
def test_a_body_that_trickles_in_is_answered_408(server: tuple[int, object]) -> None:
    port, _ = server
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"
    )
    socks = [_connect(port) for _ in range(CONNECTIONS)]
    with _closing(socks):
        for sock in socks:
            sock.send(head)
        got = _read_until_closed(socks, b" ")
    for data in got.values():
        assert data.startswith(b"HTTP/1.1 408"), data[:200]
        assert b"the request body took over 1 seconds" in data


@pytest.mark.slow
def test_an_idle_keep_alive_connection_is_closed(server: tuple[int, object]) -> None:
    port, _ = server
    socks = [_connect(port) for _ in range(CONNECTIONS)]
    with _closing(socks):
        for sock in socks:
            sock.send(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        started = time.monotonic()
        got = _read_until_closed(socks, None)
        took = time.monotonic() - started
    assert all(data.startswith(b"HTTP/1.1 404") for data in got.values())
    assert LIMIT * 0.8 <= took <= PATIENCE


@pytest.mark.slow
def test_a_keep_alive_connection_that_starts_a_request_slowly_is_cut_off(
    server: tuple[int, object],
) -> None:
    """After a response, the next request's headers get the same deadline (a client
    cannot keep the connection by sending a byte now and then)."""
    port, _ = server
    with _connect(port) as sock:
        sock.send(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.2)
        sock.send(b"GET /elsewhere HTTP/1.1\r\n")
        got = _read_until_closed([sock], b"X: 1\r\n")
    first, cut, _ = got[0].partition(b"HTTP/1.1 408")
    assert first.startswith(b"HTTP/1.1 404") and cut == b"HTTP/1.1 408"


def test_headers_without_end_are_refused_431(server: tuple[int, object]) -> None:
    port, _ = server
    with _connect(port) as sock:
        sock.send(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
        got = _read_until_closed([sock], filler * 4)
    assert got[0].startswith((b"HTTP/1.1 431", b"HTTP/1.1 400"))  # h11 refuses it itself


@pytest.mark.slow
def test_a_normal_request_is_unaffected(server: tuple[int, object]) -> None:
    port, _ = server
    with httpx.Client(timeout=5) as http:
        reply = http.post(
            f"http://127.0.0.1:{port}/mcp",
            content=b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":'
            b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            b'"io.modelcontextprotocol/clientCapabilities":{}}}}',
            headers={
                "content-type": "application/json",
                "accept": "application/json, text/event-stream",
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "server/discover",
            },
        )
        assert reply.status_code == 200, reply.text
        time.sleep(LIMIT * 1.5)  # longer than the header deadline: the next is a new one
        assert http.get(f"http://127.0.0.1:{port}/elsewhere").status_code == 404


def test_uvicorn_gets_the_limits_and_a_keyword_overrides_them() -> None:
    app = McpAsgiApp(build_server(), HttpOptions(idle_connection_seconds=7, max_connections=9))
    uv = uvicorn_server(app, "127.0.0.1", 0)
    assert uv.config.timeout_keep_alive == 7 and uv.config.limit_concurrency == 9
    assert uv.config.h11_max_incomplete_event_size == 64 * 1024
    assert uvicorn_server(app, "127.0.0.1", 0, timeout_keep_alive=2).config.timeout_keep_alive == 2


# -- the body deadline is the app's own: under any ASGI server, and only for the body ------------
def _modern(method: str, name: str | None = None) -> list[tuple[bytes, bytes]]:
    headers = {
        "host": "127.0.0.1:8000",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        **({"mcp-name": name} if name else {}),
    }
    return [(k.encode(), v.encode()) for k, v in headers.items()]


def _call(name: str) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": name, "arguments": {}, "_meta": meta}
    return json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    ).encode()


async def _exchange(app: McpAsgiApp, chunks: list[bytes], gap: float) -> tuple[int, bytes]:
    """One POST whose body comes in `chunks`, `gap` seconds apart; (status, body)."""
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": _modern("tools/call", "sleepy"),
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 40000),
        "query_string": b"",
    }
    left = list(chunks)
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        if not left:
            await asyncio.sleep(60)  # the client waits for the answer
            return {"type": "http.disconnect"}
        if len(left) < len(chunks):
            await asyncio.sleep(gap)
        chunk = left.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(left)}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(scope, receive, send), 10)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]
    return int(status), body  # type: ignore[call-overload]


def _sleepy_app(body_timeout: float) -> McpAsgiApp:
    server = Server("sleepy")

    @server.tool
    async def sleepy() -> str:
        await asyncio.sleep(4 * body_timeout)  # runs longer than the body deadline
        return "rested"

    return McpAsgiApp(server, HttpOptions(body_timeout_seconds=body_timeout))


def test_the_body_deadline_cuts_a_trickling_body_in_any_asgi_server() -> None:
    app = _sleepy_app(0.3)
    body = _call("sleepy")
    pieces = [body[i : i + 8] for i in range(0, len(body), 8)]
    status, answer = asyncio.run(_exchange(app, pieces, 0.1))
    assert status == 408
    assert json.loads(answer)["error"]["message"] == "the request body took over 0.3 seconds"


@pytest.mark.slow
def test_the_body_deadline_does_not_bound_the_request_itself() -> None:
    app = _sleepy_app(0.3)
    body = _call("sleepy")
    status, answer = asyncio.run(_exchange(app, [body[:10], body[10:]], 0.1))  # in time
    assert status == 200
    assert json.loads(answer)["result"]["content"][0]["text"] == "rested"


def test_a_large_body_the_app_did_not_read_is_not_taken_for_headers(
    server: tuple[int, object],
) -> None:
    """A response can end before the body it did not read has arrived (a 404 for an
    unknown path): the rest of that body is the request's, not the next request's head,
    so neither it nor the next request on the connection is refused as too large."""
    port, _ = server
    body = b"x" * (256 * 1024)  # far past max_header_bytes (8 KiB here)
    with httpx.Client(timeout=PATIENCE) as http:
        for _ in range(3):
            assert http.post(f"http://127.0.0.1:{port}/elsewhere", content=body).status_code == 404
        assert http.get(f"http://127.0.0.1:{port}/elsewhere").status_code == 404
