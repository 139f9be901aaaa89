"""A task cancelled through one worker while its handler finishes on another stays
cancelled (`TaskStore.put`, `_server/_task_runner`, docs/guide/tasks.md).

Two workers of one server in this process, each its own `Server` and its own Redis
connection (two store clients on the test redis-server), driven in-process. The task
runs on B. The test holds back what B's bus subscription delivers, so B does not hear
of the cancel that A writes to Redis; then it lets B's handler go on: it returns a
result, fails, asks for input, or reports progress. That is the window in which the
old code had B write its outcome over A's `cancelled` (and announce it): made certain
instead of rare.

Now the store refuses any write over a final record in the write's own step, and B
takes the stored record: `tasks/get` says cancelled on both workers, nothing B did
after the cancel reaches the bus, and B's handler, if it still runs, is cancelled.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mcpgen import Context, InputRequired, McpError, Server, elicit_form
from mcpgen.stores import BusEvent, TaskEvent, TaskState
from mcpgen.stores.redis import RedisBus, RedisStores
from tests.scale.harness import FORM, KEY
from tests.stores.redis_server import redis_url
from tests.transports.asgidriver import post, reply

pytestmark = pytest.mark.needs_redis

WAIT = 10.0  # seconds: a bound for each step, not a timing
TASKS = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {TASKS: {}},
        "elicitation": {"form": {}},
    },
}
MODERN = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


class Gate:
    """Holds back what a worker's bus subscription delivers, in order, until `open`."""

    def __init__(self, bus: RedisBus) -> None:
        self.dispatch = bus._dispatch
        self.held: list[bytes] = []
        self.holding = False
        bus._dispatch = self.message  # type: ignore[method-assign]

    def message(self, data: bytes) -> None:
        if self.holding:
            self.held.append(data)
        else:
            self.dispatch(data)

    def open(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for data in held:
            self.dispatch(data)


class Work:
    """The handler's side: it waits for `go`, then does what `outcome` says."""

    def __init__(self, outcome: str) -> None:
        self.outcome = outcome
        self.go = asyncio.Event()
        self.stopped = asyncio.Event()  # the handler was cancelled

    async def run(self, ctx: Context) -> Any:
        await asyncio.wait_for(self.go.wait(), WAIT)
        if self.outcome == "fails":
            raise McpError(-32099, "late failure")
        if self.outcome == "asks":
            return InputRequired({"name": elicit_form("Name?", FORM)})
        if self.outcome == "progress":  # a status change, then work that goes on
            ctx.progress(50, 100, "half way")
            try:
                await asyncio.sleep(WAIT * 3)
            except asyncio.CancelledError:
                self.stopped.set()
                raise
        return "done"


def _build(redis: RedisStores, work: Work) -> Server:
    server = Server("race", state_keys=[KEY], redis=redis)

    @server.tool(task="optional")
    async def job(ctx: Context) -> Any:
        return await work.run(ctx)

    return server


async def _rpc(app: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {**MODERN, "mcp-method": method, "mcp-name": params.get("taskId") or params["name"]}
    frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    status, _, body = await post(app, headers, frame, principal="alice")
    assert status == 200, body
    answer: dict[str, Any] = reply(body)
    assert "result" in answer, answer
    return answer["result"]


async def _until(check: Callable[[], bool], what: str) -> None:
    async def wait() -> None:
        while not check():
            await asyncio.sleep(0.01)

    try:
        await asyncio.wait_for(wait(), WAIT)
    except TimeoutError:
        raise AssertionError(f"not within {WAIT} s: {what}") from None


@pytest.mark.parametrize("outcome", ["completes", "fails", "asks", "progress"])
def test_a_task_cancelled_on_one_worker_stays_cancelled_when_its_handler_ends_on_another(
    outcome: str,
) -> None:
    async def scenario() -> None:
        prefix, work = f"test-{uuid.uuid4().hex}:", Work(outcome)
        stores = [RedisStores.from_url(redis_url(), prefix=prefix) for _ in range(2)]
        servers = [_build(redis, work) for redis in stores]
        apps = [server.asgi_app() for server in servers]
        a, b = apps
        gate = Gate(stores[1].bus)
        seen: list[BusEvent] = []  # every event any worker published, as A hears it
        stores[0].bus.subscribe(seen.append)
        writes: list[tuple[str, TaskState | None]] = []  # B's writes: (status, refused by)
        b_store = stores[1].tasks
        b_put = b_store.put

        async def put(state: TaskState) -> TaskState | None:
            stored = await b_put(state)
            writes.append((state.status, stored))
            return stored

        b_store.put = put  # type: ignore[method-assign]
        try:
            created = await _rpc(b, "tools/call", {"name": "job", "arguments": {}})
            task_id = created["taskId"]
            assert created["status"] == "working"
            await stores[1].bus.ready()
            gate.holding = True  # B hears nothing from here on
            await _rpc(a, "tasks/cancel", {"taskId": task_id})
            await _until(lambda: any(_status(e, task_id) == "cancelled" for e in seen), "cancel")
            work.go.set()  # B's handler goes on, unaware
            await _until(lambda: bool(writes), "B's late write")
            if outcome == "progress":
                await asyncio.wait_for(work.stopped.wait(), WAIT)  # the work stops
            await _says_cancelled(apps, task_id)  # B has still heard nothing
            gate.open()
            # A marker published by B after its late write: once A hears it, whatever B
            # announced before it has arrived (a publisher's events keep their order).
            servers[1].notify_tools_changed()
            await _until(lambda: any(type(e) is not TaskEvent for e in seen), "B's marker")
            await _says_cancelled(apps, task_id)
            announced = [_status(e, task_id) for e in seen if type(e) is TaskEvent]
            assert announced == ["cancelled"], announced
            assert task_id not in servers[1].core.tasks.running
            assert all(stored is not None and stored.status == "cancelled" for _, stored in writes)
        finally:
            work.go.set()
            gate.open()
            for app in apps:
                await app.shutdown()
            for redis in stores:
                await redis.sessions.aclose()
                await redis.bus.aclose()
                await redis.tasks.aclose()
                await redis.connection.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 60))


async def _says_cancelled(apps: list[Any], task_id: str) -> None:
    """tasks/get on each worker: cancelled by the client, with no outcome."""
    for app in apps:
        got = await _rpc(app, "tasks/get", {"taskId": task_id})
        assert got["status"] == "cancelled", got
        assert got["statusMessage"] == "cancelled by the client"
        assert "result" not in got and "error" not in got and "inputRequests" not in got


def _status(event: BusEvent, task_id: str) -> str | None:
    if type(event) is TaskEvent and event.task_id == task_id:
        status = event.detail.get("status")
        return status if isinstance(status, str) else None
    return None
