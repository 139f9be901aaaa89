"""SSE resumability for legacy (2025-11-25) sessions: event ids from the EventStore, and
a GET with `Last-Event-ID` that replays what the client missed, then goes on live."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from mcpgen import Server
from mcpgen.stores import InMemoryEventStore
from mcpgen.transports import McpAsgiApp
from tests.server.conftest import build_server
from tests.transports.asgidriver import Exchange, initialize, post, reply, rpc

T = TypeVar("T")
LIST_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def app_of(server: Server | None = None) -> McpAsgiApp:
    return McpAsgiApp(server or build_server())


async def open_stream(
    app: McpAsgiApp, session: dict[str, str], last_event_id: str | None = None
) -> tuple[Exchange, str | None]:
    """A GET stream of `session`; returns it and the id of its first block."""
    headers = {**session, "accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    stream = Exchange(app, "GET", headers)
    status, response_headers = await stream.start()
    assert status == 200 and response_headers["content-type"] == "text/event-stream"
    first = await stream.block(comments=True)  # the stream opens at once
    assert first is not None
    return stream, first.get("id")


def add_tool(server: Server, name: str) -> None:
    def tool() -> str:
        return name

    tool.__name__ = name
    server.tool(tool)  # a list_changed for every initialized legacy session


def test_a_reconnecting_client_gets_what_it_missed_then_the_live_stream() -> None:
    async def scenario() -> None:
        server = build_server()
        app = app_of(server)
        session = await initialize(app)
        status, _, body = await post(
            app, session, rpc(1, "resources/subscribe", {"uri": "mem://readme"})
        )
        assert status == 200 and reply(body)["result"] == {}

        stream, priming = await open_stream(app, session)
        assert priming is not None  # a priming event: resumable from the very start
        add_tool(server, "one")
        seen_id, seen = await stream.event()
        assert seen["method"] == LIST_CHANGED and seen_id is not None
        add_tool(server, "two")  # written to the stream, never read by the client
        await asyncio.sleep(0.01)
        assert stream.pending()
        await stream.disconnect()

        # While no stream is open: a resource update and another list change.
        server.notify_resource_updated("mem://readme")
        add_tool(server, "three")

        resumed, _ = await open_stream(app, session, seen_id)
        missed = [await resumed.event() for _ in range(3)]
        assert [frame["method"] for _, frame in missed] == [LIST_CHANGED, UPDATED, LIST_CHANGED]
        assert missed[1][1]["params"]["uri"] == "mem://readme"
        ids = [seen_id] + [eid for eid, _ in missed]
        assert None not in ids and len(set(ids)) == 4
        add_tool(server, "four")  # live again
        live_id, live = await resumed.event()
        assert live["method"] == LIST_CHANGED and live_id not in ids
        await resumed.disconnect()

        # Resuming from the newest id misses nothing: no event is sent twice.
        again, _ = await open_stream(app, session, live_id)
        add_tool(server, "five")
        next_id, frame = await again.event()
        assert frame["method"] == LIST_CHANGED and next_id not in [*ids, live_id]
        await again.disconnect()

    run(scenario())


def test_resuming_from_the_priming_event_replays_everything_after_it() -> None:
    async def scenario() -> None:
        server = build_server()
        app = app_of(server)
        session = await initialize(app)
        stream, priming = await open_stream(app, session)
        add_tool(server, "one")
        add_tool(server, "two")
        await asyncio.sleep(0.01)
        await stream.disconnect()  # read nothing past the priming event
        resumed, _ = await open_stream(app, session, priming)
        names = [(await resumed.event())[1]["method"] for _ in range(2)]
        assert names == [LIST_CHANGED, LIST_CHANGED]
        await resumed.disconnect()

    run(scenario())


def test_unknown_or_forgotten_ids_get_a_fresh_stream() -> None:
    async def scenario() -> None:
        now = [0.0]
        server = build_server()
        app = server.asgi_app(events=InMemoryEventStore(ttl=60, clock=lambda: now[0]))
        session = await initialize(app)
        stream, _ = await open_stream(app, session)
        add_tool(server, "one")
        first_id, _ = await stream.event()
        add_tool(server, "two")
        await asyncio.sleep(0.01)
        await stream.disconnect()
        for bad in ("nonsense", "", first_id + "9"):
            fresh, priming = await open_stream(app, session, bad)
            assert priming is not None and priming != first_id  # a new priming event
            add_tool(server, f"x{len(bad)}")
            _, frame = await fresh.event()  # the live stream, not a replay of "two"
            assert frame["method"] == LIST_CHANGED
            await asyncio.sleep(0.01)
            assert fresh.pending() == 0
            await fresh.disconnect()
        now[0] += 61  # the stream is forgotten
        assert first_id is not None
        forgotten, priming = await open_stream(app, session, first_id)
        assert priming is not None
        await asyncio.sleep(0.01)
        assert forgotten.pending() == 0  # nothing replayed
        await forgotten.disconnect()

    run(scenario())


def test_event_ids_do_not_replay_another_sessions_stream() -> None:
    async def scenario() -> None:
        server = build_server()
        app = app_of(server)
        alice = await initialize(app)
        bob = await initialize(app)
        stream, priming = await open_stream(app, alice)
        add_tool(server, "secret")
        await stream.event()
        await stream.disconnect()
        bob_stream, _ = await open_stream(app, bob)
        _, frame = await bob_stream.event()  # bob's own copy of the change
        await bob_stream.disconnect()
        assert frame["method"] == LIST_CHANGED
        assert priming is not None
        stolen, bob_priming = await open_stream(app, bob, priming)
        assert bob_priming is not None and bob_priming != priming  # a fresh stream of bob's
        await asyncio.sleep(0.01)
        assert stolen.pending() == 0  # alice's events are not replayed
        await stolen.disconnect()

    run(scenario())


def test_a_post_stream_is_replayable() -> None:
    async def scenario() -> None:
        app = app_of()
        session = await initialize(app)
        call = rpc(5, "tools/call", {"name": "steps", "arguments": {"count": 2}})
        params = call["params"]
        params["_meta"] = {"progressToken": "p"}
        exchange = Exchange(app, "POST", session, __import__("json").dumps(call).encode())
        status, _ = await exchange.start()
        assert status == 200
        first = await exchange.block()
        assert first is not None and "id" in first
        events = []
        while True:
            eid, frame = await exchange.event()
            events.append((eid, frame))
            if frame.get("id") == 5:
                break
        await asyncio.wait_for(exchange.task, 5)
        assert all(eid is not None for eid, _ in events)
        # A client cut off after the priming event resumes on a GET and gets it all.
        resumed, _ = await open_stream(app, session, first["id"])
        replayed = [await resumed.event() for _ in events]
        assert replayed == events
        assert replayed[-1][1]["result"]["content"][0]["text"] == "2 steps"
        await resumed.disconnect()

    run(scenario())


def test_older_sessions_and_modern_requests_carry_no_event_ids() -> None:
    async def scenario() -> None:
        events = InMemoryEventStore()
        app = McpAsgiApp(build_server(), events=events)
        session = await initialize(app, "2025-06-18")
        stream, first_id = await open_stream(app, session)
        assert first_id is None
        await stream.disconnect()
        call = rpc(1, "tools/call", {"name": "steps", "arguments": {"count": 1}})
        call["params"]["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p",
        }
        modern = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "steps",
        }
        status, headers, body = await post(app, modern, call)
        assert status == 200 and headers["content-type"] == "text/event-stream"
        assert b"\nid:" not in body and not body.startswith(b"id:")
        assert reply(body)["result"]["content"][0]["text"] == "1 steps"
        assert len(events) == 0  # nothing stored for either

    run(scenario())
