"""Legacy Streamable HTTP on the same endpoint: sessions, GET streams, server requests."""

from __future__ import annotations

import asyncio
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
from tests.transports import asgidriver as driver
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


@pytest.mark.slow
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
    app = McpAsgiApp(build_server(), store=store)

    async def scenario() -> None:
        sessions = [await driver.initialize(app) for _ in range(3)]
        for session in sessions[1:]:
            assert await ping(app, session) == 200  # the first is now the least recently used
        fourth = await driver.initialize(app)  # over the cap: the first goes
        assert len(store) == 3
        assert await ping(app, sessions[0]) == 404
        assert len(app.sessions) == 3  # its live half went with it
        now[0] = 8
        assert await ping(app, sessions[1]) == 200
        now[0] = 16  # the others idle for 16 s, sessions[1] for 8
        assert await ping(app, sessions[1]) == 200
        for session in (sessions[2], fourth):
            assert await ping(app, session) == 404
        assert store.sweep() == 0 and len(store) == 1
        now[0] = 100
        assert store.sweep() == 1 and len(store) == 0
        assert await ping(app, sessions[1]) == 404
        assert len(app.sessions) == 0

    asyncio.run(scenario())


async def ping(app: McpAsgiApp, session: dict[str, str], principal: str | None = None) -> int:
    status, _, _ = await driver.post(app, session, driver.rpc(1, "ping"), principal)
    return status


def test_a_session_belongs_to_the_principal_that_created_it() -> None:
    app = McpAsgiApp(build_server())

    async def scenario() -> None:
        alice = await driver.initialize(app, principal="alice")
        assert await ping(app, alice, "alice") == 200
        for intruder in ("mallory", None):
            assert await ping(app, alice, intruder) == 404
            get = driver.Exchange(
                app, "GET", {**alice, "accept": "text/event-stream"}, b"", intruder
            )
            assert (await get.start())[0] == 404
            delete = driver.Exchange(app, "DELETE", alice, b"", intruder)
            assert (await delete.start())[0] == 404
        assert await ping(app, alice, "alice") == 200  # still there for its owner
        anonymous = await driver.initialize(app)
        assert await ping(app, anonymous, "alice") == 404
        assert await ping(app, anonymous) == 200
        delete = driver.Exchange(app, "DELETE", alice, b"", "alice")
        assert (await delete.start())[0] == 200
        assert await ping(app, alice, "alice") == 404

    asyncio.run(scenario())


def test_state_is_stored_and_another_worker_serves_the_session() -> None:
    """Two apps (two workers) over one store: the second rebuilds the session from the
    state the first stored, and the changes either makes are saved."""
    from mcpgen.stores import InMemorySessionStore

    store = InMemorySessionStore()
    first = McpAsgiApp(build_server(), store=store)
    second = McpAsgiApp(build_server(), store=store)

    async def scenario() -> None:
        session = await driver.initialize(first, principal="p")
        session_id = session["mcp-session-id"]
        state = await store.load(session_id)
        assert state is not None and state.initialized and state.principal == "p"
        assert state.version == "2025-11-25" and state.client_info == {
            "name": "driver",
            "version": "1",
        }
        subscribe = driver.rpc(2, "resources/subscribe", {"uri": "mem://readme"})
        assert (await driver.post(second, session, subscribe, "p"))[0] == 200
        level = driver.rpc(3, "logging/setLevel", {"level": "error"})
        assert (await driver.post(second, session, level, "p"))[0] == 200
        state = await store.load(session_id)
        assert state is not None and state.subscriptions == ["mem://readme"]
        assert state.log_rank == 4  # error
        listed = await driver.post(second, session, driver.rpc(4, "tools/list", {}), "p")
        assert driver.reply(listed[2])["result"]["tools"]
        # The second worker's session delivers what the stored state asks for.
        stream = driver.Exchange(second, "GET", {**session, "accept": "text/event-stream"})
        stream.scope["mcpgen.principal"] = "p"
        assert (await stream.start())[0] == 200
        second.server.notify_resource_updated("mem://readme")
        _, frame = await stream.event()
        assert frame["method"] == "notifications/resources/updated"
        await stream.disconnect()
        unsubscribe = driver.rpc(5, "resources/unsubscribe", {"uri": "mem://readme"})
        assert (await driver.post(first, session, unsubscribe, "p"))[0] == 200
        state = await store.load(session_id)
        assert state is not None and state.subscriptions == []
        assert state.log_rank == 4  # the first worker took up the second one's changes
        # DELETE on one worker ends the session for both.
        assert (await driver.Exchange(second, "DELETE", session, b"", "p").start())[0] == 200
        assert await ping(first, session, "p") == 404

    asyncio.run(scenario())


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
