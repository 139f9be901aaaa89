"""Redis faults: unreachable at startup, gone mid-flight (503, then recovery without
restarting the worker), and a task whose worker died."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import httpx
import msgspec
import pytest

from mcpgen import Client, Server, ToolTask
from mcpgen.stores import TaskState
from mcpgen.stores.redis import LEASE_LOST, Connection, RedisTaskStore
from tests.scale.harness import build, workers
from tests.scale.wire import frame, open_session
from tests.stores.redis_server import server as redis_server
from tests.transports.httpharness import body, modern_headers

pytestmark = pytest.mark.needs_redis

CAPS = "io.modelcontextprotocol/clientCapabilities"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_an_unreachable_redis_fails_the_startup_with_the_reason() -> None:
    url = f"redis://:hunter2@127.0.0.1:{_free_port()}/0"
    app = build(url).asgi_app()
    sent: list[dict[str, Any]] = []

    async def startup() -> None:
        messages = iter([{"type": "lifespan.startup"}])

        async def receive() -> dict[str, Any]:
            return next(messages)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await asyncio.wait_for(app({"type": "lifespan"}, receive, send), 10)

    asyncio.run(startup())
    assert sent[-1]["type"] == "lifespan.startup.failed"
    message = sent[-1]["message"]
    assert "redis at redis://***@127.0.0.1:" in message and "is unavailable" in message
    assert "hunter2" not in message  # the password stays out of logs


def test_redis_needs_shared_state_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPGEN_STATE_KEYS", raising=False)
    with pytest.raises(Exception, match="MCPGEN_STATE_KEYS"):
        Server("s", redis="redis://127.0.0.1:1/0")
    monkeypatch.setenv("MCPGEN_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("MCPGEN_STATE_KEYS", "k" * 32)
    server = Server("s")
    assert server.redis is not None
    assert server.redis.connection.url == "redis://127.0.0.1:1/0"
    monkeypatch.delenv("MCPGEN_REDIS_URL")
    assert Server("s").redis is None


def _pause(milliseconds: int) -> None:
    with socket.create_connection(("127.0.0.1", redis_server().port)) as sock:
        sock.sendall(b"CLIENT PAUSE %d ALL\r\n" % milliseconds)
        assert sock.recv(16).startswith(b"+OK")


@pytest.mark.slow
def test_requests_during_an_outage_get_503_and_service_recovers() -> None:
    with workers() as (urls, _), httpx.Client(timeout=15) as http:
        session = open_session(http, urls[0], "alice")
        call = frame(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        assert http.post(urls[1], content=call, headers=session).status_code == 200
        _pause(4700)  # longer than the stores' 2 s timeout, after the cache's bound:
        time.sleep(1.2)  # a hung Redis is noticed within 1 s (a closed one at once)
        started = time.monotonic()
        down = http.post(urls[0], content=call, headers=session)
        assert time.monotonic() - started < 3.4  # an answer, not a hang
        assert down.status_code == 503
        error = down.json()["error"]
        assert error["code"] == -32603 and "unavailable" in error["message"]
        assert_generic(error["message"])
        time.sleep(max(0.0, 3.6 - (time.monotonic() - started)))
        for url in urls:  # the same workers, the same session: served again
            up = http.post(url, content=call, headers=session)
            assert up.status_code == 200, up.text
            assert json.loads(up.text)["result"]["content"][0]["text"] == "3"


def assert_generic(message: str) -> None:
    """A client learns that the service is unavailable, not where Redis is or why."""
    port = str(redis_server().port)
    for leak in ("redis", "127.0.0.1", port, "Error", "timeout", "Timeout"):
        assert leak not in message, (leak, message)


def _working(task_id: str) -> TaskState:
    now = int(time.time() * 1000)
    return TaskState(
        id=task_id,
        principal=None,
        status="working",
        created_ms=now,
        updated_ms=now,
        ttl_ms=60_000,
        poll_ms=100,
        owner="worker-a",
    )


def test_a_task_whose_worker_stopped_renewing_fails_after_its_lease() -> None:
    async def main() -> None:
        prefix = f"lease-{time.monotonic_ns()}:"
        runner = RedisTaskStore(Connection(redis_server().url, prefix=prefix), lease=0.3)
        other = RedisTaskStore(Connection(redis_server().url, prefix=prefix), lease=0.3)
        await runner.put(_working("kept"))
        await runner.put(_working("orphan"))
        await asyncio.sleep(0.6)  # two lease periods: renewed by the runner
        kept = await other.get("kept")
        assert kept is not None and kept.status == "working"
        await runner.aclose()  # the worker dies: nobody renews
        await asyncio.sleep(0.5)
        failed = await other.get("orphan")
        assert failed is not None and failed.status == "failed"
        assert failed.error is not None and failed.error["code"] == LEASE_LOST
        assert "worker-a" in failed.error["message"] and "went away" in failed.error["message"]
        assert await other.get("orphan") == failed  # stored: every worker sees the same
        done = msgspec.structs.replace(_working("done"), status="completed", result={})
        await other.put(done)
        await asyncio.sleep(0.4)
        assert await other.get("done") == done  # a finished task needs no lease
        await runner.put(_working("remote"))  # cancelled by the other worker:
        await other.put(msgspec.structs.replace(_working("remote"), status="cancelled"))
        await asyncio.sleep(0.25)
        assert "remote" not in runner._held  # the runner stopped renewing its lease

    asyncio.run(main())


@pytest.mark.slow
def test_a_modern_task_request_during_an_outage_gets_503_too() -> None:
    """The task store is read inside the core (tasks/get): its outage is a 503 as well."""
    tasks: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    with workers() as (urls, _), httpx.Client(timeout=15) as http:

        async def start() -> str:
            async with Client.http(urls[0], era="modern") as client:
                handle = await client.call_tool("slow", {"seconds": 30}, task=True)
                assert isinstance(handle, ToolTask)
                return handle.id

        task_id = asyncio.run(start())
        meta: dict[str, Any] = {CAPS: tasks}
        get = body(2, "tasks/get", {"taskId": task_id}, True, **meta)
        headers = modern_headers("tasks/get", task_id)
        _pause(2500)
        down = http.post(urls[1], content=get, headers=headers)
        assert down.status_code == 503
        assert "unavailable" in down.json()["error"]["message"]
        assert_generic(down.json()["error"]["message"])
        time.sleep(2.6)
        up = http.post(urls[1], content=get, headers=headers)
        assert up.status_code == 200 and up.json()["result"]["status"] == "working"
