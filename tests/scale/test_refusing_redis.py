"""A Redis that answers but refuses to serve (memory full under `noeviction`, an ACL
that does not let the stores' user run scripts, a script that keeps Redis busy) is a
store that is down for now: every request that needs it gets `503` with the generic
message and `Retry-After`, never a `500` (an exception out of the app, its traceback in
the log) and never Redis's own words. The detail goes to the log."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from mcpgen import Server
from mcpgen.middleware import Rate, RateLimit, ResponseCache
from mcpgen.stores import ChangeEvent, StoreUnavailableError
from mcpgen.stores.redis import RedisRateLimitStore, RedisResponseStore
from mcpgen.stores.redis._base import Connection, guard
from mcpgen.stores.redis._bus import RedisBus
from mcpgen.types import ToolAnnotations
from tests.stores.redis_server import RedisServer
from tests.transports.asgidriver import LEGACY, Exchange, post, rpc

pytestmark = pytest.mark.needs_redis

UNAVAILABLE = {
    "jsonrpc": "2.0",
    "error": {"code": -32603, "message": "service temporarily unavailable; try again"},
}
MODERN = {**LEGACY, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
INIT = rpc(
    0,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
)


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """A redis-server of this module's own: its configuration is changed."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    found = RedisServer(binary)
    yield found
    found.close()


def _build(url: str, what: str) -> Server:
    middleware: list[Any] = []
    if what == "cache":
        middleware.append(ResponseCache(store=RedisResponseStore(Connection(url, prefix="rc-"))))
    if what == "limit":
        store = RedisRateLimitStore(Connection(url, prefix="rl-"))
        middleware.append(RateLimit(per_caller=Rate(100, 100), store=store))
    server = Server("refused", redis=url, state_keys=["refusing-redis-state-key-0123456"])
    for m in middleware:
        server.add_middleware(m)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(task="required")
    async def job() -> str:
        return "done"

    return server


@contextlib.contextmanager
def _refusing(admin: redis.Redis, how: str) -> Iterator[None]:
    """Redis refusing in the way `how` while the block runs."""
    if how == "oom":
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", "1")
        try:
            yield
        finally:
            admin.config_set("maxmemory", "0")
    elif how == "noperm":
        admin.execute_command("ACL", "SETUSER", "default", "-eval", "-evalsha")
        try:
            yield
        finally:
            admin.execute_command("ACL", "SETUSER", "default", "+@all")
    else:  # busy: a script that runs until it is killed
        admin.config_set("busy-reply-threshold", "10")
        port = admin.connection_pool.connection_kwargs["port"]
        runner = threading.Thread(target=_spin, args=(port,))
        runner.start()
        try:
            yield
        finally:
            for _ in range(100):
                with contextlib.suppress(redis.RedisError):
                    admin.script_kill()
                    break
                threading.Event().wait(0.05)
            runner.join(10)
            admin.config_set("busy-reply-threshold", "5000")


def _spin(port: int) -> None:
    with contextlib.suppress(redis.RedisError):
        redis.Redis(port=port).eval("while true do end", 0)


async def _requests(url: str, what: str, admin: redis.Redis, how: str) -> list[tuple[int, Any]]:
    app = _build(url, what).asgi_app()
    _, headers, _ = await post(app, LEGACY, INIT)
    session = {**LEGACY, "mcp-session-id": headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    call = rpc(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    task = rpc(2, "tools/call", {"name": "job", "arguments": {}, "_meta": META})
    sent = {
        "sessions": [(LEGACY, INIT), (session, call)],
        "tasks": [({**MODERN, "mcp-name": "job"}, task)],
        "cache": [
            ({**MODERN, "mcp-name": "add"}, {**call, "params": {**call["params"], "_meta": META}})
        ],
        "limit": [
            ({**MODERN, "mcp-name": "add"}, {**call, "params": {**call["params"], "_meta": META}})
        ],
    }[what]
    answers = []
    with _refusing(admin, how):
        if how == "busy":
            await asyncio.sleep(0.3)
        for headers_, body in sent:
            exchange = Exchange(app, "POST", headers_, json.dumps(body).encode())
            status, _ = await exchange.start()
            answers.append((status, json.loads(await exchange.body())))
            await asyncio.wait_for(exchange.task, 5)
    return answers


def _generic(status: int, answer: Any) -> bool:
    """A 503 with the generic message (from the core: the request's id and a reference
    the log also names)."""
    error = answer.get("error") or {}
    message = error.get("message", "")
    return (
        status == 503
        and error.get("code") == -32603
        and message.startswith(UNAVAILABLE["error"]["message"])
        and set(error) == {"code", "message"}
        and "redis" not in message.lower()
    )


@pytest.mark.parametrize("how", ["oom", "noperm", "busy"])
@pytest.mark.parametrize("what", ["sessions", "tasks", "cache", "limit"])
def test_a_redis_that_refuses_to_serve_is_a_503_with_the_generic_message(
    own_redis: RedisServer, what: str, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    admin = redis.Redis(port=own_redis.port)
    admin.flushall()
    with caplog.at_level(logging.WARNING):
        answers = asyncio.run(_requests(own_redis.url, what, admin, how))
    # The first request needs Redis; a later one may be served without it (a session
    # its worker holds), else it is refused the same way.
    assert _generic(*answers[0]), answers[0]
    for status, answer in answers[1:]:
        assert _generic(status, answer) or (status, "result" in answer) == (200, True), answer
    assert "unavailable" in caplog.text  # what Redis said: for the operator
    assert "never retrieved" not in caplog.text


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ClusterError("TTL exhausted."),
        redis.exceptions.SlotNotCoveredError("no node serves slot 42"),
        redis.exceptions.RedisClusterUnreachableError("none of the nodes answers"),
        redis.exceptions.ResponseError("MISCONF Redis is configured to save RDB snapshots"),
        redis.exceptions.ResponseError("LOADING Redis is loading the dataset in memory"),
    ],
    ids=lambda e: type(e).__name__ + ":" + str(e).split()[0],
)
def test_every_outage_a_cluster_client_raises_is_unavailable(error: Exception) -> None:
    async def main() -> None:
        async with guard("redis://user:secret@127.0.0.1:1/0"):
            raise error

    with pytest.raises(StoreUnavailableError) as caught:
        asyncio.run(main())
    assert "secret" not in str(caught.value)


def test_a_bug_is_not_an_outage() -> None:
    async def main() -> None:
        async with guard("redis://127.0.0.1:1/0"):
            raise redis.exceptions.ResponseError("WRONGTYPE Operation against a key")

    with pytest.raises(redis.exceptions.ResponseError):
        asyncio.run(main())


def test_a_bus_whose_subscription_is_refused_keeps_trying_and_recovers(
    own_redis: RedisServer,
) -> None:
    """SUBSCRIBE refused (an ACL without the channel) is an outage of the bus: it
    subscribes again until Redis lets it, then events flow; it never stops for good."""
    admin = redis.Redis(port=own_redis.port)
    admin.execute_command("ACL", "SETUSER", "default", "resetchannels")

    async def main() -> list[Any]:
        bus = RedisBus(Connection(own_redis.url, prefix="bus-acl-"))
        seen: list[Any] = []
        bus.subscribe(seen.append)
        try:
            await asyncio.sleep(1.0)  # refused, at least once
            admin.execute_command("ACL", "SETUSER", "default", "allchannels")
            await asyncio.wait_for(bus.ready(), 10)
            bus.publish(ChangeEvent(kind="tools"))
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.05)
            return seen
        finally:
            await bus.aclose()

    try:
        seen = asyncio.run(main())
    finally:
        admin.execute_command("ACL", "SETUSER", "default", "allchannels")
    assert [type(event).__name__ for event in seen] == ["ChangeEvent"]
