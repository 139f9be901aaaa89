"""The deprecated 2024-11-05 HTTP+SSE transport, served by the same ASGI app: a GET
stream whose first event names the message endpoint, POSTs answered 202, every server
message on the stream."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen.transports import McpAsgiApp
from tests.server.conftest import build_server
from tests.transports.httpharness import rpc, serve

JSON = {"content-type": "application/json"}
WAIT = 10.0


@pytest.fixture(scope="module")
def app() -> McpAsgiApp:
    return build_server().asgi_app(keepalive_seconds=0.3)


@pytest.fixture(scope="module")
def base(app: McpAsgiApp) -> Iterator[str]:
    with serve(app) as (address, _):
        yield address.removesuffix("/mcp")


class Stream:
    """A GET on the SSE path read in a thread over a plain socket (so `close` ends it at
    once): ("endpoint", path), ("message", json) and ("comment", text) in arrival order."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        self.base = base
        self.items: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.raw_start = b""
        self.ended = threading.Event()
        host, port = base.removeprefix("http://").split(":")
        self._sock = socket.create_connection((host, int(port)), timeout=WAIT)
        self._sock.settimeout(None)
        lines = ["GET /sse HTTP/1.1", f"Host: {host}:{port}"]
        lines += [
            f"{k}: {v}" for k, v in {"accept": "text/event-stream", **(headers or {})}.items()
        ]
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            reader = self._sock.makefile("rb")
            self.status = int(reader.readline().split()[1])
            while (line := reader.readline().strip()) != b"":
                name, _, value = line.decode().partition(":")
                self.headers[name.lower()] = value.strip()
            text, block = b"", []
            while (size := int(reader.readline().strip() or b"0", 16)) > 0:  # chunked
                data = reader.read(size)
                reader.readline()
                if not self.raw_start:
                    self.raw_start = data
                text += data
                while b"\n" in text:
                    line, text = text.split(b"\n", 1)
                    if line.strip():
                        block.append(line.decode())
                    elif block:
                        self.items.put(_parse(block))
                        block = []
        except (OSError, ValueError, IndexError):
            pass
        finally:
            self.ended.set()
            self.items.put(("end", None))

    def next(self, kind: str = "message") -> Any:
        """The next item of `kind` (others skipped), within WAIT seconds."""
        deadline = time.monotonic() + WAIT
        while True:
            got, value = self.items.get(timeout=max(0.01, deadline - time.monotonic()))
            if got == kind:
                return value
            assert got != "end", f"the stream ended while waiting for {kind}"

    def until(self, rid: Any) -> list[Any]:
        """Messages up to and including the reply with id `rid`."""
        seen = []
        while True:
            message = self.next()
            seen.append(message)
            if message.get("id") == rid and "method" not in message:
                return seen

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(WAIT)
        assert not self._thread.is_alive()


def _parse(block: list[str]) -> tuple[str, Any]:
    if all(line.startswith(":") for line in block):
        return ("comment", block[0][1:].strip())
    event = next((ln[6:].strip() for ln in block if ln.startswith("event:")), "message")
    data = "\n".join(ln[5:].lstrip() for ln in block if ln.startswith("data:"))
    return (event, data if event == "endpoint" else json.loads(data))


@pytest.fixture
def stream(base: str) -> Iterator[Stream]:
    s = Stream(base)
    yield s
    s.close()


def connect(
    http: httpx.Client,
    stream: Stream,
    version: str = "2024-11-05",
    caps: dict[str, Any] | None = None,
) -> str:
    """Read the endpoint, initialize; returns the messages URL."""
    endpoint = stream.next("endpoint")
    url = stream.base + endpoint
    params = {
        "protocolVersion": version,
        "capabilities": caps or {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    r = http.post(url, content=rpc(0, "initialize", params), headers=JSON)
    assert r.status_code == 202 and r.content == b""
    reply = stream.next()
    assert reply["id"] == 0 and reply["result"]["protocolVersion"] == version
    assert reply["result"]["serverInfo"]["name"] == "test-server"
    r = http.post(url, content=rpc(None, "notifications/initialized"), headers=JSON)
    assert r.status_code == 202
    return url


def test_endpoint_event_comes_first(stream: Stream, app: McpAsgiApp) -> None:
    endpoint = stream.next("endpoint")
    assert stream.status == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert stream.raw_start.startswith(b"event: endpoint\n")  # the first bytes of the body
    path, _, query = endpoint.partition("?")
    assert path == "/messages" and query.startswith("session_id=")
    session_id = query.removeprefix("session_id=")
    assert len(session_id) >= 32 and app.legacy_sse is not None
    assert app.legacy_sse.store.get(session_id) is not None


def test_replies_go_on_the_stream(http: httpx.Client, stream: Stream) -> None:
    url = connect(http, stream)
    r = http.post(
        url,
        content=rpc(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        headers=JSON,
    )
    assert r.status_code == 202 and r.content == b""
    reply = stream.next()
    assert reply["id"] == 1 and reply["result"]["content"][0]["text"] == "hi"
    assert http.post(url, content=rpc(2, "tools/list", {}), headers=JSON).status_code == 202
    listed = stream.next()
    assert listed["id"] == 2 and "echo" in {t["name"] for t in listed["result"]["tools"]}
    # A protocol error is a reply like any other.
    assert http.post(url, content=rpc(3, "no/such"), headers=JSON).status_code == 202
    error = stream.next()
    assert error["id"] == 3 and error["error"]["code"] == -32601


def test_notifications_precede_the_reply(http: httpx.Client, stream: Stream) -> None:
    url = connect(http, stream, "2025-06-18")
    params = {"name": "steps", "arguments": {"count": 2}, "_meta": {"progressToken": "p"}}
    assert http.post(url, content=rpc(5, "tools/call", params), headers=JSON).status_code == 202
    seen = stream.until(5)
    progress = [m["params"] for m in seen if m.get("method") == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in progress] == [("p", 1), ("p", 2)]
    logs = [m["params"]["data"] for m in seen if m.get("method") == "notifications/message"]
    assert "did step 1" in logs and "did step 2" in logs
    assert seen[-1]["result"]["content"][0]["text"] == "2 steps"


def test_handlers_overlap(http: httpx.Client, stream: Stream) -> None:
    """A slow call does not hold up the next message: both are accepted at once."""
    url = connect(http, stream)
    started = time.monotonic()
    call = rpc(6, "tools/call", {"name": "wait", "arguments": {}})
    assert http.post(url, content=call, headers=JSON).status_code == 202
    assert http.post(url, content=rpc(7, "ping"), headers=JSON).status_code == 202
    assert stream.next() == {"jsonrpc": "2.0", "id": 7, "result": {}}
    cancel = rpc(None, "notifications/cancelled", {"requestId": 6})
    assert http.post(url, content=cancel, headers=JSON).status_code == 202
    assert http.post(url, content=rpc(10, "ping"), headers=JSON).status_code == 202
    assert stream.next()["id"] == 10  # the cancelled call never answers
    assert time.monotonic() - started < 5


def test_server_to_client_request_round_trip(http: httpx.Client, stream: Stream) -> None:
    url = connect(http, stream, "2025-11-25", caps={"elicitation": {}})
    call = rpc(8, "tools/call", {"name": "confirm", "arguments": {"action": "go"}})
    assert http.post(url, content=call, headers=JSON).status_code == 202
    ask = stream.next()
    assert ask["method"] == "elicitation/create" and "id" in ask
    assert ask["params"]["message"] == "Really go?"
    answer = {
        "jsonrpc": "2.0",
        "id": ask["id"],
        "result": {"action": "accept", "content": {"sure": True}},
    }
    r = http.post(url, content=json.dumps(answer).encode(), headers=JSON)
    assert r.status_code == 202
    final = stream.next()
    assert final["id"] == 8 and final["result"]["content"][0]["text"] == "accept:go:{'sure': True}"


def test_session_changes_reach_the_stream(http: httpx.Client, stream: Stream) -> None:
    url = connect(http, stream)
    call = rpc(9, "tools/call", {"name": "trigger_change", "arguments": {}})
    assert http.post(url, content=call, headers=JSON).status_code == 202
    seen = stream.until(9)
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in seen


def test_keepalive_comments(stream: Stream) -> None:
    stream.next("endpoint")
    assert stream.next("comment") == "keep-alive"  # the app's interval is 0.3 s here


def test_bad_posts(http: httpx.Client, stream: Stream, base: str) -> None:
    url = connect(http, stream)
    r = http.post(base + "/messages", content=rpc(1, "ping"), headers=JSON)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    r = http.post(base + "/messages?session_id=nope", content=rpc(1, "ping"), headers=JSON)
    assert r.status_code == 404 and r.json()["error"]["code"] == -32600
    r = http.post(url, content=rpc(1, "ping"), headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = http.post(url, content=b"x" * (4 * 1024 * 1024 + 1), headers=JSON)
    assert r.status_code == 413
    # Not JSON: 400 with the JSON-RPC error, which also goes down the stream.
    r = http.post(url, content=b"{not json", headers=JSON)
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700
    assert stream.next()["error"]["code"] == -32700
    # JSON but not a message: the error goes down the stream, the POST was accepted.
    assert http.post(url, content=b"42", headers=JSON).status_code == 202
    assert stream.next()["error"]["code"] == -32600
    assert (
        http.post(url, content=rpc(2, "tools/call", {"name": 5}), headers=JSON).status_code == 202
    )
    invalid = stream.next()
    assert invalid["id"] == 2 and invalid["error"]["code"] == -32602
    # A malformed notification gets nothing; the session carries on.
    assert http.post(url, content=b'{"jsonrpc":"2.0","method":7}', headers=JSON).status_code == 202
    assert http.post(url, content=rpc(3, "ping"), headers=JSON).status_code == 202
    assert stream.next() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_wrong_methods_and_accept(http: httpx.Client, base: str) -> None:
    r = http.post(base + "/sse", content=b"{}", headers=JSON)
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    r = http.get(base + "/messages")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    r = http.get(base + "/sse", headers={"accept": "application/json"})
    assert r.status_code == 406
    assert http.get(base + "/elsewhere").status_code == 404


def test_host_and_origin_are_checked_on_both_paths(http: httpx.Client, base: str) -> None:
    evil = {"origin": "http://evil.example"}
    r = http.get(base + "/sse", headers={"accept": "text/event-stream", **evil})
    assert r.status_code == 403 and "Origin" in r.json()["error"]["message"]
    r = http.post(base + "/messages?session_id=x", content=rpc(1, "ping"), headers={**JSON, **evil})
    assert r.status_code == 403
    r = http.get(base + "/sse", headers={"accept": "text/event-stream", "host": "evil.example"})
    assert r.status_code == 403 and "Host" in r.json()["error"]["message"]
    local = Stream(base, {"origin": base})  # a loopback origin is fine
    try:
        assert local.next("endpoint").startswith("/messages?session_id=")
    finally:
        local.close()


def test_closing_the_stream_ends_the_session(http: httpx.Client) -> None:
    app = build_server().asgi_app()
    assert app.legacy_sse is not None
    with serve(app) as (address, _):
        s = Stream(address.removesuffix("/mcp"))
        try:
            url = connect(http, s)
            call = rpc(1, "tools/call", {"name": "wait", "arguments": {}})
            assert http.post(url, content=call, headers=JSON).status_code == 202
            deadline = time.monotonic() + WAIT
            while not app.tasks:  # the handler is running
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert len(app.legacy_sse.store) == 1 and app.server.core.legacy_sessions
        finally:
            s.close()
        deadline = time.monotonic() + WAIT
        while len(app.legacy_sse.store) or app.tasks:  # forgotten, work cancelled
            assert time.monotonic() < deadline, (len(app.legacy_sse.store), app.tasks)
            time.sleep(0.01)
        assert not app.server.core.legacy_sessions
        assert http.post(url, content=rpc(2, "ping"), headers=JSON).status_code == 404


def test_sessions_are_bounded(http: httpx.Client) -> None:
    app = build_server().asgi_app(max_sessions=2)
    with serve(app) as (address, _):
        base = address.removesuffix("/mcp")
        streams = [Stream(base) for _ in range(2)]
        try:
            for s in streams:
                s.next("endpoint")
            r = http.get(base + "/sse", headers={"accept": "text/event-stream"})
            assert r.status_code == 503
            assert app.legacy_sse is not None and len(app.legacy_sse.store) == 2
        finally:
            for s in streams:
                s.close()


def test_shutdown_ends_the_streams() -> None:
    app = build_server().asgi_app()
    with serve(app) as (address, server):
        s = Stream(address.removesuffix("/mcp"))
        try:
            s.next("endpoint")
            started = time.monotonic()
            server.should_exit = True
            assert s.ended.wait(WAIT)
            assert time.monotonic() - started < app.options.shutdown_grace_seconds
        finally:
            s.close()


def test_options_turn_it_off(http: httpx.Client) -> None:
    app = build_server().asgi_app(sse_path=None)
    assert app.legacy_sse is None
    with serve(app) as (address, _):
        base = address.removesuffix("/mcp")
        assert http.get(base + "/sse", headers={"accept": "text/event-stream"}).status_code == 404
        assert (
            http.post(base + "/messages?session_id=x", content=b"{}", headers=JSON).status_code
            == 404
        )


def test_paths_must_differ() -> None:
    from mcpgen._errors import ConfigurationError

    for options in ({"sse_path": "/mcp"}, {"messages_path": "/sse"}, {"messages_path": "/mcp/"}):
        with pytest.raises(ConfigurationError, match="must differ"):
            build_server().asgi_app(**options)


def test_custom_paths(http: httpx.Client) -> None:
    app = build_server().asgi_app(sse_path="/old/events", messages_path="/old/post")
    with serve(app) as (address, _):
        base = address.removesuffix("/mcp")
        assert http.get(base + "/sse").status_code == 404
        with http.stream("GET", base + "/old/events") as r:  # no Accept: anything goes
            assert r.status_code == 200
            lines = r.iter_lines()
            assert next(lines) == "event: endpoint"
            data = next(lines)
            assert data.startswith("data: /old/post?session_id=")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_legacy_versions(http: httpx.Client, stream: Stream, version: str) -> None:
    url = connect(http, stream, version)
    assert http.post(url, content=rpc(1, "ping"), headers=JSON).status_code == 202
    assert stream.next() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_an_unread_stream_keeps_a_bounded_backlog(caplog: pytest.LogCaptureFixture) -> None:
    from mcpgen.transports._asgi import ResponseStream

    class _App:
        def spawn(self, coro: Any) -> None:  # pragma: no cover - not called here
            coro.close()

    stream = ResponseStream(_App(), None, None)
    stream.max_queued = 50
    for i in range(80):
        stream.notify(b'{"n":%d}' % i)
    assert len(stream.events) == 50
    assert stream.events[-1] == b'{"n":49}'  # the oldest kept, the newest dropped
    assert sum("not reading" in r.getMessage() for r in caplog.records) == 1
