"""What reaches an HTTP app after its shutdown is over (an app mounted in another ASGI
router can still be routed requests once its own lifespan has ended): every request
gets a 503 JSON-RPC error with its id, a notification 202 and nothing else, and no
session, task, tool run or store call comes of any of it (`_drain.closed_reply`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpgen import Server
from mcpgen.stores import InMemorySessionStore, InMemoryTaskStore, TaskState
from tests.transports.asgidriver import LEGACY, Exchange, initialize, post, rpc

CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
TASKS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    CAPABILITIES: {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}
MODERN = {
    **LEGACY,
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "work",
}
STOPPED = "the worker has stopped; send the request to another one"


class _Counted(InMemoryTaskStore):
    calls = 0

    async def create(self, state: TaskState, **kwargs: Any) -> bool:
        _Counted.calls += 1
        return await super().create(state, **kwargs)

    async def put(self, state: TaskState) -> None:
        _Counted.calls += 1
        await super().put(state)


class _CountedSessions(InMemorySessionStore):
    calls = 0

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_") and name != "calls":
            _CountedSessions.calls += 1
        return super().__getattribute__(name)


RUNS: list[str] = []
server = Server("stopped", task_store=_Counted())


@server.tool(task="optional")
async def work() -> str:
    """Notes each run."""
    RUNS.append("work")
    return "done"


async def _lifespan(app: Any) -> None:
    """The ASGI lifespan, from startup to the end of shutdown, as a host runs it."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["type"])

    await inbox.put({"type": "lifespan.startup"})
    await inbox.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(app({"type": "lifespan"}, inbox.get, send), 20)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def _stopped(status: int, headers: dict[str, str], body: bytes, rid: Any) -> None:
    assert status == 503, body
    assert "mcp-session-id" not in headers
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": rid,
        "error": {"code": -32603, "message": STOPPED},
    }


def test_every_request_to_a_stopped_app_is_a_503_with_its_id() -> None:
    async def main() -> None:
        store = _CountedSessions()
        app = server.asgi_app(store=store, shutdown_grace_seconds=0.1)
        session = await initialize(app)  # a session of the app's life, held in the store
        await _lifespan(app)
        RUNS.clear()
        _Counted.calls = _CountedSessions.calls = 0
        assert len(store) == 1

        hello = {"protocolVersion": "2025-11-25", "capabilities": {}}
        hello["clientInfo"] = {"name": "late", "version": "1"}
        _stopped(*await post(app, LEGACY, rpc(1, "initialize", hello)), 1)

        call = {"name": "work", "arguments": {}, "_meta": {**TASKS_META, CAPABILITIES: {}}}
        _stopped(*await post(app, MODERN, rpc("two", "tools/call", call)), "two")

        tasked = {"name": "work", "arguments": {}, "_meta": TASKS_META}
        _stopped(*await post(app, MODERN, rpc(3, "tools/call", tasked)), 3)

        in_session = rpc(4, "tools/call", {"name": "work", "arguments": {}})
        _stopped(*await post(app, session, in_session), 4)

        batch = [rpc(5, "ping"), rpc(None, "notifications/progress", {}), rpc("six", "ping")]
        exchange = Exchange(app, "POST", session, json.dumps(batch).encode())
        status, _ = await exchange.start()
        assert status == 503
        assert [r["id"] for r in json.loads(await exchange.body())] == [5, "six"]

        note = rpc(None, "notifications/progress", {"progressToken": 1, "progress": 1})
        status, _, body = await post(app, session, note)
        assert (status, body) == (202, b"")

        stream = Exchange(app, "GET", {**session, "accept": "text/event-stream"})
        status, _ = await stream.start()
        assert status == 503
        assert json.loads(await stream.body())["error"]["message"] == "shutting down"

        gone = Exchange(app, "DELETE", session)
        status, _ = await gone.start()
        assert status == 503

        assert RUNS == []
        assert _Counted.calls == 0 and _CountedSessions.calls == 0
        assert len(store) == 1 and len(app.sessions) <= 1
        assert not app.tasks

    asyncio.run(main())


def test_an_app_shut_down_before_it_started_does_not_start_at_a_request() -> None:
    """A shutdown with no startup before it (a host that ends at once): a later request
    neither enters the server's lifespan nor is served."""

    async def main() -> None:
        app = server.asgi_app()
        await app.shutdown()
        _stopped(
            *await post(
                app,
                MODERN,
                rpc(9, "tools/call", {"name": "work", "_meta": {**TASKS_META, CAPABILITIES: {}}}),
            ),
            9,
        )
        assert not app.life.started

    asyncio.run(main())
