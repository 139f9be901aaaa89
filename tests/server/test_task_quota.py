"""A client may have `max_tasks_per_client` tasks running at once: one client asking
for thousands of long tasks is refused with a clear JSON-RPC error once it has that
many, while other clients (other principals, other addresses) still get theirs; an
ended task frees its place. In memory and on a real redis-server (several workers
count together)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mcpgen import ConfigurationError, Context, Server
from mcpgen.stores import InMemoryTaskStore, TaskStore
from mcpgen.stores.redis import Connection, RedisTaskStore
from tests.server.harness import Client, Recorder, request
from tests.stores.redis_server import redis_url

TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {"extensions": {TASKS: {}}}
MOST = 4


def _memory() -> TaskStore:
    return InMemoryTaskStore()


def _redis() -> TaskStore:
    return RedisTaskStore(Connection(redis_url(), prefix=f"tq-{uuid.uuid4().hex}:"))


@pytest.fixture(params=[_memory, _redis], ids=["memory", "redis"])
def make_store(request: pytest.FixtureRequest) -> Callable[[], TaskStore]:
    factory: Callable[[], TaskStore] = request.param
    return factory


def _server(store: TaskStore) -> Server:
    server = Server("quota", task_store=store, max_tasks_per_client=MOST)

    @server.tool(task="optional")
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(90)  # the 90 s task: cancelled at the end of the test
        return "never"

    return server


class Peer(Recorder):
    """A channel of an anonymous HTTP client at `address`."""

    def __init__(self, address: str) -> None:
        super().__init__()
        self.peer = address


async def _call(c: Client, channel: Recorder) -> dict[str, Any]:
    line = request("c", "tools/call", {"name": "slow", "arguments": {}}, caps=DECLARED)
    reply = await c.areply(line, channel)
    assert isinstance(reply, dict)
    return reply


async def _cancel(c: Client, channel: Recorder, task_id: str) -> None:
    line = request("x", "tasks/cancel", {"taskId": task_id}, caps=DECLARED)
    assert "result" in await c.areply(line, channel)


def test_one_client_cannot_run_more_than_its_share_of_tasks(
    make_store: Callable[[], TaskStore],
) -> None:
    store = make_store()
    server = _server(store)
    mallory, alice = Recorder(principal="mallory"), Recorder(principal="alice")
    anonymous, other_address = Peer("203.0.113.9"), Peer("198.51.100.2")

    async def body() -> None:
        c = Client(server, mallory)
        created = [(await _call(c, mallory))["result"]["taskId"] for _ in range(MOST)]
        for _ in range(20):  # the flood: every further one refused, nothing stored
            refused = await _call(c, mallory)
            assert refused["error"]["code"] == -32029
            assert f"at most {MOST} per client" in refused["error"]["message"]
            assert refused["error"]["data"] == {"maxRunningTasks": MOST}
        assert len(server.core.tasks.running) == MOST
        # other clients are not affected
        assert (await _call(c, alice))["result"]["resultType"] == "task"
        anonymous_ids = [(await _call(c, anonymous))["result"]["taskId"] for _ in range(MOST)]
        assert (await _call(c, anonymous))["error"]["code"] == -32029
        assert (await _call(c, other_address))["result"]["resultType"] == "task"
        # an ended task frees a place
        await _cancel(c, mallory, created[0])
        assert (await _call(c, mallory))["result"]["resultType"] == "task"
        assert (await _call(c, mallory))["error"]["code"] == -32029
        assert anonymous_ids
        server.close()  # cancels every running task
        await asyncio.sleep(0.05)
        close = getattr(store, "aclose", None)
        if close is not None:
            await close()

    asyncio.run(asyncio.wait_for(body(), 20))


def test_two_workers_on_redis_count_a_clients_tasks_together() -> None:
    prefix = f"tq2-{uuid.uuid4().hex}:"
    first = RedisTaskStore(Connection(redis_url(), prefix=prefix))
    second = RedisTaskStore(Connection(redis_url(), prefix=prefix))
    one, two = _server(first), _server(second)
    mallory = Recorder(principal="mallory")

    async def body() -> None:
        a, b = Client(one, mallory), Client(two, mallory)
        for i in range(MOST):
            assert (await _call(a if i % 2 else b, mallory))["result"]["resultType"] == "task"
        assert (await _call(a, mallory))["error"]["code"] == -32029
        assert (await _call(b, mallory))["error"]["code"] == -32029
        for server in (one, two):
            server.close()
        await asyncio.sleep(0.05)
        await first.aclose()
        await second.aclose()

    asyncio.run(asyncio.wait_for(body(), 20))


def test_the_bound_is_checked_and_may_be_turned_off() -> None:
    with pytest.raises(ConfigurationError):
        Server("x", max_tasks_per_client=0)
    server = Server("x", max_tasks_per_client=None)

    @server.tool(task="optional")
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(90)
        return "never"

    mallory = Recorder(principal="mallory")

    async def body() -> None:
        c = Client(server, mallory)
        for _ in range(3 * MOST):
            assert (await _call(c, mallory))["result"]["resultType"] == "task"
        server.close()
        await asyncio.sleep(0.05)

    asyncio.run(asyncio.wait_for(body(), 20))
