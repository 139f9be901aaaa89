"""Legacy Streamable HTTP on the same endpoint: sessions, GET streams, server requests."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen.transports import McpAsgiApp
from tests.server.conftest import build_server
from tests.transports.httpharness import iter_sse, rpc, serve, sse_events

LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def app() -> McpAsgiApp:
    return build_server().asgi_app()


@pytest.fixture(scope="module")
def url(app: McpAsgiApp) -> Iterator[str]:
    with serve(app) as (address, _):
        yield address


def initialize(
    http: httpx.Client, url: str, version: str = "2025-11-25", caps: dict[str, Any] | None = None
) -> dict[str, str]:
    params = {
        "protocolVersion": version,
        "capabilities": caps or {},
        "clientInfo": {"name": "legacy", "version": "1"},
    }
    r = http.post(url, content=rpc(0, "initialize", params), headers=LEGACY)
    assert r.status_code == 200, r.text
    session_id = r.headers["mcp-session-id"]
    assert re.fullmatch(r"[\x21-\x7e]{32,}", session_id)
    assert r.json()["result"]["protocolVersion"] == version
    headers = {**LEGACY, "mcp-session-id": session_id, "mcp-protocol-version": version}
    assert (
        http.post(url, content=rpc(None, "notifications/initialized"), headers=headers).status_code
        == 202
    )
    return headers


def result(r: httpx.Response) -> Any:
    if r.headers["content-type"].startswith("text/event-stream"):
        return sse_events(r.text)[-1]
    return r.json()


def test_session_lifecycle(http: httpx.Client, url: str) -> None:
    headers = initialize(http, url)
    listed = result(http.post(url, content=rpc(1, "tools/list", {}), headers=headers))
    assert "resultType" not in listed["result"] and listed["result"]["tools"]
    assert result(http.post(url, content=rpc(2, "ping"), headers=headers))["result"] == {}
    assert http.delete(url, headers=headers).status_code == 200
    gone = http.post(url, content=rpc(3, "tools/list", {}), headers=headers)
    assert gone.status_code == 404
    assert http.delete(url, headers=headers).status_code == 404


def test_requests_without_a_session(http: httpx.Client, url: str) -> None:
    r = http.post(
        url,
        content=rpc(1, "tools/list", {}),
        headers={**LEGACY, "mcp-protocol-version": "2025-11-25"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] == -32602
    r = http.post(
        url, content=rpc(1, "tools/list", {}), headers={**LEGACY, "mcp-session-id": "nope"}
    )
    assert r.status_code == 404


def test_initialize_without_version_header_and_old_versions(http: httpx.Client, url: str) -> None:
    for version in ("2025-03-26", "2025-06-18", "2024-11-05"):
        headers = initialize(http, url, version)
        assert http.delete(url, headers=headers).status_code == 200


def test_no_session_leak_after_many_cycles(app: McpAsgiApp, http: httpx.Client, url: str) -> None:
    before = len(app.store)
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    }
    for i in range(1000):
        r = http.post(url, content=rpc(i, "initialize", params), headers=LEGACY)
        assert (
            http.delete(
                url, headers={**LEGACY, "mcp-session-id": r.headers["mcp-session-id"]}
            ).status_code
            == 200
        )
    assert len(app.store) == before
    assert len(app.server.core.legacy_sessions) <= before


def test_idle_sessions_expire_and_the_store_is_bounded() -> None:
    from mcpgen.transports import InMemorySessionStore

    now = [0.0]
    store = InMemorySessionStore(idle_timeout=10, max_sessions=3, clock=lambda: now[0])
    server = build_server()
    sessions = [store.add(server.session()) for _ in range(3)]
    store.add(server.session())  # over the cap: the least recently used goes
    assert store.get(sessions[0].id) is None and len(store) == 3
    now[0] = 100
    assert store.get(sessions[1].id) is None  # idle too long
    assert store.sweep() == 2 and len(store) == 0


def test_server_to_client_elicitation_over_sse(http: httpx.Client, url: str) -> None:
    headers = initialize(http, url, caps={"elicitation": {}})
    final: list[Any] = []

    def call() -> None:
        with (
            httpx.Client(timeout=10) as c,
            c.stream(
                "POST",
                url,
                content=rpc(7, "tools/call", {"name": "confirm", "arguments": {"action": "go"}}),
                headers=headers,
            ) as r,
        ):
            events = iter_sse(r)
            for kind, event in events:
                if kind != "event":
                    continue
                if event.get("method") == "elicitation/create":
                    answer = {
                        "jsonrpc": "2.0",
                        "id": event["id"],
                        "result": {"action": "accept", "content": {"sure": True}},
                    }
                    assert (
                        http.post(
                            url, content=json.dumps(answer).encode(), headers=headers
                        ).status_code
                        == 202
                    )
                elif event.get("id") == 7:
                    final.append(event)
                    return

    thread = threading.Thread(target=call)
    thread.start()
    thread.join(15)
    assert final and final[0]["result"]["content"][0]["text"] == "accept:go:{'sure': True}"


def test_priming_event_and_retry_for_2025_11_25(http: httpx.Client, url: str) -> None:
    headers = initialize(http, url)
    with http.stream(
        "POST",
        url,
        content=rpc(1, "tools/call", {"name": "steps", "arguments": {"count": 1}}),
        headers=headers,
    ) as r:
        blocks = list(iter_sse(r))
    assert blocks[0][0] == "priming" and any(line.startswith("retry:") for line in blocks[0][1])
    assert blocks[-1][1]["id"] == 1


def test_get_stream_carries_session_notifications(
    http: httpx.Client, url: str, app: McpAsgiApp
) -> None:
    headers = initialize(http, url)
    got: list[Any] = []
    ready = threading.Event()

    def listen() -> None:
        with (
            httpx.Client(timeout=10) as c,
            c.stream("GET", url, headers={**headers, "accept": "text/event-stream"}) as r,
        ):
            assert r.status_code == 200
            for kind, event in iter_sse(r):
                ready.set()
                if kind == "event":
                    got.append(event)
                    return

    thread = threading.Thread(target=listen)
    thread.start()
    assert ready.wait(5)
    time.sleep(0.1)
    trigger = {**headers}
    r = http.post(
        url,
        content=rpc(99, "tools/call", {"name": "trigger_change", "arguments": {}}),
        headers=trigger,
    )
    assert result(r)["result"]["content"][0]["text"] == "changed"
    thread.join(5)
    assert got and got[0]["method"] == "notifications/tools/list_changed"


def test_batches_in_a_2025_03_26_session(http: httpx.Client, url: str) -> None:
    headers = initialize(http, url, "2025-03-26")
    batch = json.dumps([json.loads(rpc(1, "ping")), json.loads(rpc(2, "tools/list", {}))]).encode()
    replies = http.post(url, content=batch, headers=headers).json()
    assert [r["id"] for r in replies] == [1, 2]
