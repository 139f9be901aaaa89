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
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
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
        self.resumed = 0  # runs of `confirm` with its answer

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

    @server.tool(task="optional")
    def confirm(ctx: Context) -> Any:
        if ctx.input("name") is None:
            return InputRequired({"name": elicit_form("Name?", FORM)})
        work.resumed += 1
        return "confirmed"

    return server


class Workers:
    """A and B: a `Server` and its own Redis connection each, under one prefix; what B's
    subscription delivers passes `gate`; `seen` is every event published, as A hears it."""

    def __init__(self, work: Work) -> None:
        prefix = f"test-{uuid.uuid4().hex}:"
        self.stores = [RedisStores.from_url(redis_url(), prefix=prefix) for _ in range(2)]
        self.servers = [_build(redis, work) for redis in self.stores]
        self.apps = [server.asgi_app() for server in self.servers]
        self.gate = Gate(self.stores[1].bus)
        self.seen: list[BusEvent] = []
        self.stores[0].bus.subscribe(self.seen.append)

    async def hold_b(self) -> None:
        """From now on B hears nothing on the bus (until `gate.open`)."""
        await self.stores[1].bus.ready()
        self.gate.holding = True

    async def announced(self, task_id: str) -> list[str | None]:
        """The task's status changes published by either worker, in order: once A hears
        a marker B publishes now, all B announced before has arrived."""
        self.gate.open()
        self.servers[1].notify_tools_changed()
        await _until(lambda: any(type(e) is not TaskEvent for e in self.seen), "B's marker")
        return [_status(e, task_id) for e in self.seen if type(e) is TaskEvent]


@asynccontextmanager
async def _workers(work: Work) -> AsyncIterator[Workers]:
    workers = Workers(work)
    try:
        yield workers
    finally:
        work.go.set()
        workers.gate.open()
        for app in workers.apps:
            await app.shutdown()
        for redis in workers.stores:
            await redis.sessions.aclose()
            await redis.bus.aclose()
            await redis.tasks.aclose()
            await redis.connection.aclose()


async def _rpc(app: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {**MODERN, "mcp-method": method, "mcp-name": params.get("taskId") or params["name"]}
    frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    status, _, body = await post(app, headers, frame, principal="alice")
    assert status == 200, body
    answer: dict[str, Any] = reply(body)
    result: dict[str, Any] = answer.get("result", {})
    assert "result" in answer, answer
    return result


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
        work = Work(outcome)
        async with _workers(work) as workers:
            a, b = workers.apps
            writes: list[TaskState | None] = []  # what B's late writes found stored
            b_store = workers.stores[1].tasks
            b_put = b_store.put

            async def put(state: TaskState) -> TaskState | None:
                writes.append(await b_put(state))
                return writes[-1]

            b_store.put = put  # type: ignore[method-assign]
            created = await _rpc(b, "tools/call", {"name": "job", "arguments": {}})
            task_id = created["taskId"]
            assert created["status"] == "working"
            await workers.hold_b()
            await _rpc(a, "tasks/cancel", {"taskId": task_id})
            heard = workers.seen
            await _until(lambda: "cancelled" in [_status(e, task_id) for e in heard], "cancel")
            work.go.set()  # B's handler goes on, unaware
            await _until(lambda: bool(writes), "B's late write")  # (created with `create`)
            if outcome == "progress":
                await _until(work.stopped.is_set, "the handler's work stopped")
            await _says_cancelled(workers.apps, task_id)  # B has still heard nothing
            assert await workers.announced(task_id) == ["cancelled"]
            await _says_cancelled(workers.apps, task_id)
            assert task_id not in workers.servers[1].core.tasks.running
            assert all(stored is not None and stored.status == "cancelled" for stored in writes)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_answers_taken_on_one_worker_as_another_cancels_do_not_resume_the_task() -> None:
    """tasks/update on B (which runs the task) reads the record as input_required; A's
    cancel lands right after that read: B's write of `working` is refused, the handler
    does not run again and nothing but the cancel is announced."""

    async def scenario() -> None:
        work = Work("completes")
        async with _workers(work) as workers:
            a, b = workers.apps
            b_store = workers.stores[1].tasks
            b_get, armed = b_store.get, asyncio.Event()

            async def get(task_id: str) -> TaskState | None:
                found = await b_get(task_id)
                if armed.is_set():  # B has read the record: A cancels now, B unaware
                    armed.clear()
                    await _rpc(a, "tasks/cancel", {"taskId": task_id})
                return found

            b_store.get = get  # type: ignore[method-assign]
            created = await _rpc(b, "tools/call", {"name": "confirm", "arguments": {}})
            task_id = created["taskId"]
            asked = await _rpc(a, "tasks/get", {"taskId": task_id})
            assert asked["status"] == "input_required", asked
            await workers.hold_b()
            armed.set()
            answer = {"name": {"action": "accept", "content": {"sure": True}}}
            await _rpc(b, "tasks/update", {"taskId": task_id, "inputResponses": answer})
            assert not armed.is_set()  # the cancel ran inside B's update
            await _says_cancelled(workers.apps, task_id)
            announced = await workers.announced(task_id)
            assert announced == ["input_required", "cancelled"], announced
            await _says_cancelled(workers.apps, task_id)
            assert work.resumed == 0
            assert task_id not in workers.servers[1].core.tasks.running

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
