"""What the built-in policies do beyond `test_policies.py`'s tour: the limits a
timeout picks (tool, method, default, task), an abandoned worker thread, callers'
own buckets and a cluster's shared ones, the cache hints, a cache shared on Redis,
visibility by scopes and by a predicate, and the request log's fields."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from typing import Any

import pytest

from mcpgen import CacheHint, Client, Context, McpError, Server
from mcpgen.auth._tokens import AccessToken
from mcpgen.middleware import (
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    Feature,
    Rate,
    RateLimit,
    RequestLog,
    ResponseCache,
    Timeouts,
    Visibility,
)
from mcpgen.stores import InMemoryRateLimitStore
from mcpgen.stores.redis import Connection, RedisRateLimitStore, RedisResponseStore
from mcpgen_types import latest as t
from tests.server.harness import Recorder, request
from tests.stores.redis_server import redis_url

TASKS = "io.modelcontextprotocol/tasks"


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


# -- timeouts ---------------------------------------------------------------------------------
def test_the_limit_is_the_tools_then_the_methods_then_the_default() -> None:
    server = Server("t", middleware=[Timeouts(0.2, methods={"prompts/get": 0.1})])

    @server.tool
    async def nap(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "rested"

    @server.tool(timeout=1.5)
    async def long_nap(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "rested long"

    @server.prompt
    async def slow_prompt() -> str:
        await asyncio.sleep(5)
        return "never"

    async def main() -> None:
        async with Client.memory(server, era="modern") as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("nap", {"seconds": 5})
            assert caught.value.data == {"timeoutSeconds": 0.2}
            assert text(await client.call_tool("long_nap", {"seconds": 0.4})) == "rested long"
            with pytest.raises(McpError) as caught:
                await client.get_prompt("slow_prompt")
            assert caught.value.code == REQUEST_TIMEOUT
            assert "prompts/get timed out" in caught.value.message
            assert caught.value.data == {"timeoutSeconds": 0.1}

    asyncio.run(main())


def test_a_handlers_own_timeout_error_is_not_renamed() -> None:
    server = Server("t", middleware=[Timeouts(5)])

    @server.prompt
    def fails() -> str:
        raise TimeoutError("upstream timed out")

    async def main() -> None:
        async with Client.memory(server, era="modern") as client:
            with pytest.raises(McpError) as caught:
                await client.get_prompt("fails")
            assert caught.value.code == -32603  # the core's internal error, as without it

    asyncio.run(main())


def test_a_sync_handlers_thread_is_abandoned_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("t", middleware=[Timeouts(0.2)])
    finished = threading.Event()

    @server.tool
    def blocking() -> str:
        time.sleep(0.6)
        finished.set()
        return "late"

    async def main() -> float:
        async with Client.memory(server, era="legacy") as client:
            started = time.monotonic()
            with pytest.raises(McpError) as caught:
                await client.call_tool("blocking")
            assert caught.value.code == REQUEST_TIMEOUT
            return time.monotonic() - started

    with caplog.at_level(logging.WARNING, logger="mcpgen.server"):
        waited = asyncio.run(main())
    assert waited < 0.55  # answered at the limit, not when the thread ended
    assert finished.wait(5)  # the thread ran on
    assert any("worker thread runs on" in r.getMessage() for r in caplog.records)


def test_a_task_has_its_own_limit() -> None:
    server = Server("t", middleware=[Timeouts(0.1, task=0.8)], task_poll_seconds=0.05)
    cleaned: list[str] = []

    @server.tool(task="optional")
    async def job(ctx: Context, seconds: float) -> str:
        try:
            await asyncio.sleep(seconds)
        finally:
            cleaned.append(str(ctx.task_id))
        return "done"

    async def main() -> tuple[Any, Any]:
        async with Client.memory(server, era="modern") as client:
            ok = await client.call_tool("job", {"seconds": 0.3}, task=True)
            slow = await client.call_tool("job", {"seconds": 5}, task=True)
            done = await ok.result(timeout=10)  # type: ignore[union-attr]
            with pytest.raises(Exception) as caught:
                await slow.result(timeout=10)  # type: ignore[union-attr]
            return done, caught.value

    done, failure = asyncio.run(main())
    assert text(done) == "done"  # 0.3 s: over the request limit, well within the task's
    assert "timed out" in str(failure) and "0.8 s" in str(failure)
    assert len(cleaned) == 2


# -- rate limits ------------------------------------------------------------------------------
def counted_server(limit: RateLimit) -> Server:
    server = Server("r", sync_workers=0, middleware=[limit])

    @server.tool
    def ping() -> str:
        return "pong"

    return server


def call(server: Server, principal: str | None, rid: int = 1) -> dict[str, Any]:
    """One tools/call through a session, as `principal`."""
    import json

    channel = Recorder(principal=principal)
    outcome = server.session().receive(request(rid, "tools/call", {"name": "ping"}), channel)
    assert isinstance(outcome, bytes)  # in-memory buckets: answered inline
    reply: dict[str, Any] = json.loads(outcome)
    if "result" in reply:
        assert reply["result"]["content"] == [{"type": "text", "text": "pong"}]
    return reply


def test_each_caller_has_its_own_bucket_and_the_global_one_is_shared() -> None:
    server = counted_server(
        RateLimit(per_caller=Rate(0.001, burst=2), global_=Rate(0.001, burst=5))
    )
    assert "result" in call(server, "ada") and "result" in call(server, "ada")
    refused = call(server, "ada")
    assert refused["error"]["code"] == RATE_LIMITED
    assert refused["error"]["data"]["retryAfterSeconds"] > 100
    assert "result" in call(server, "bob") and "result" in call(server, "bob")
    assert "result" in call(server, "cy")  # the fifth token of the global bucket
    assert call(server, "dee")["error"]["code"] == RATE_LIMITED  # global bucket empty


def test_made_up_tool_names_share_one_bucket_per_caller() -> None:
    """Per (caller, tool) buckets exist for the server's tools; names no tool has share
    one bucket per caller, so a flood of made-up names neither makes a bucket each nor
    pushes the caller's own buckets out of a bounded store (a refill for free)."""
    store = InMemoryRateLimitStore(max_buckets=50)
    limit = RateLimit(per_caller_tool=Rate(0.001, burst=2), store=store)
    server = counted_server(limit)
    assert "result" in call(server, "ada") and "result" in call(server, "ada")
    assert call(server, "ada")["error"]["code"] == RATE_LIMITED
    refused = 0
    for i in range(200):
        channel = Recorder(principal="ada")
        made_up = request(10 + i, "tools/call", {"name": f"nope-{i}"})
        outcome = server.session().receive(made_up, channel)
        assert isinstance(outcome, bytes)
        refused += b'"code":%d' % RATE_LIMITED in outcome
    assert refused >= 198  # two made-up calls, then that bucket is empty too
    assert len(store._buckets) <= 3
    assert call(server, "ada")["error"]["code"] == RATE_LIMITED  # ping's bucket is kept


def test_two_workers_on_redis_share_one_limit() -> None:
    prefix = f"rl-{uuid.uuid4().hex}:"
    workers = [
        counted_server(
            RateLimit(
                per_caller=Rate(0.001, burst=3),
                store=RedisRateLimitStore(Connection(redis_url(), prefix=prefix)),
            )
        )
        for _ in range(2)
    ]

    async def main() -> list[bool]:
        admitted = []
        for i in range(6):
            async with Client.memory(workers[i % 2], era="modern") as client:
                try:
                    await client.call_tool("ping")
                    admitted.append(True)
                except McpError as exc:
                    admitted.append(exc.code != RATE_LIMITED)
        return admitted

    assert asyncio.run(main()) == [True, True, True, False, False, False]


# -- caching ----------------------------------------------------------------------------------
def test_cache_hints_are_emitted_and_a_configured_hint_is_honoured() -> None:
    server = Server(
        "c",
        cache={"resources/list": CacheHint(ttl_ms=5_000, scope="public")},
        middleware=[ResponseCache(ttl=30)],
    )
    server.add_resource("mem://x", "x", name="x")

    @server.tool
    def noop() -> str:
        return ""

    async def main() -> tuple[Any, Any]:
        async with Client.memory(server, era="modern", cache=False) as client:
            tools = await client.connection.request("tools/list", {})
            resources = await client.connection.request("resources/list", {})
            return tools, resources

    tools, resources = asyncio.run(main())
    assert (tools.ttl_ms, tools.cache_scope) == (30_000, "private")
    assert (resources.ttl_ms, resources.cache_scope) == (5_000, "public")


def test_workers_on_redis_share_one_cache_and_its_invalidation() -> None:
    prefix = f"rc-{uuid.uuid4().hex}:"
    counts = [0]

    def worker() -> Server:
        store = RedisResponseStore(Connection(redis_url(), prefix=prefix))
        server = Server("c", middleware=[ResponseCache(ttl=60, store=store)])

        @server.tool(annotations=t.ToolAnnotations(read_only_hint=True))
        def count() -> int:
            counts[0] += 1
            return counts[0]

        @server.tool
        def bump() -> str:
            server.notify_tools_changed()
            return ""

        return server

    a, b = worker(), worker()

    async def main() -> list[str]:
        async with (
            Client.memory(a, era="modern", cache=False) as ca,
            Client.memory(b, era="modern", cache=False) as cb,
        ):
            seen = [text(await ca.call_tool("count")), text(await cb.call_tool("count"))]
            await cb.call_tool("bump")  # b's change event invalidates for both
            await asyncio.sleep(0.3)
            seen.append(text(await ca.call_tool("count")))
            return seen

    assert asyncio.run(main()) == ["1", "1", "2"]


# -- visibility -------------------------------------------------------------------------------
def visible_server(visibility: Visibility) -> Server:
    server = Server("v", sync_workers=0, middleware=[visibility])

    @server.tool(scopes=["admin"])
    def wipe() -> str:
        return "wiped"

    @server.tool
    def look() -> str:
        return "looked"

    @server.prompt(tags=["beta"])
    def draft() -> str:
        return "draft"

    return server


def session_call(server: Server, method: str, params: dict[str, Any], scopes: set[str]) -> Any:
    import json

    channel = Recorder(principal="p")
    channel.auth = AccessToken(subject="p", scopes=frozenset(scopes))
    outcome = server.session().receive(request(1, method, params), channel)
    assert isinstance(outcome, bytes)
    return json.loads(outcome)


def test_features_a_token_may_not_use_are_hidden_and_refused() -> None:
    server = visible_server(Visibility())
    listed = session_call(server, "tools/list", {}, set())["result"]["tools"]
    assert [tool["name"] for tool in listed] == ["look"]
    refused = session_call(server, "tools/call", {"name": "wipe"}, set())
    # refused by authorization in the core, before any middleware: the scope it lacks
    assert refused["error"]["code"] == -32003
    assert refused["error"]["data"] == {"requiredScopes": ["admin"]}
    listed = session_call(server, "tools/list", {}, {"admin"})["result"]["tools"]
    assert sorted(tool["name"] for tool in listed) == ["look", "wipe"]
    wiped = session_call(server, "tools/call", {"name": "wipe"}, {"admin"})["result"]
    assert wiped["content"] == [{"type": "text", "text": "wiped"}]


def test_a_predicate_and_run_time_switches_with_list_changed() -> None:
    def allow(ctx: Any, feature: Feature) -> bool:
        info = ctx.client_info
        return feature.kind != "prompt" or (info is not None and info.name == "trusted")

    visibility = Visibility(allow=allow)
    server = visible_server(visibility)

    async def main() -> tuple[list[str], list[str], list[str], list[str]]:
        async with (
            Client.memory(server, era="legacy", name="trusted") as trusted,
            Client.memory(server, era="legacy", name="other") as other,
        ):
            prompts = [p.name for p in await trusted.list_prompts()]
            hidden = [p.name for p in await other.list_prompts()]
            with pytest.raises(McpError):
                await other.get_prompt("draft")
            heard: list[str] = []
            listener = asyncio.ensure_future(_first_change(trusted, heard))
            await asyncio.sleep(0.2)
            visibility.disable("tool", "look")
            await asyncio.wait_for(listener, 5)
            tools = [tool.name for tool in await trusted.list_tools(refresh=True)]
            return prompts, hidden, heard, tools

    prompts, hidden, heard, tools = asyncio.run(main())
    assert prompts == ["draft"] and hidden == []
    assert heard == ["notifications/tools/list_changed"]
    assert "look" not in tools


async def _first_change(client: Client, heard: list[str]) -> None:
    async for note in client.listen(tools=True):
        heard.append(type(note).__struct_config__.tag)  # type: ignore[attr-defined]
        return


# -- the request log --------------------------------------------------------------------------
def test_the_request_log_has_one_structured_record_per_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("l", middleware=[RequestLog()])

    @server.tool
    def fine(secret: str) -> str:
        return "ok"

    @server.tool
    def broken() -> str:
        raise RuntimeError("no")

    async def main() -> None:
        async with Client.memory(server, era="modern") as client:
            await client.call_tool("fine", {"secret": "hunter2"})
            await client.call_tool("broken")
            with pytest.raises(McpError):
                await client.call_tool("missing")

    with caplog.at_level(logging.INFO, logger="mcpgen.requests"):
        asyncio.run(main())
    records = [r for r in caplog.records if r.name == "mcpgen.requests"]
    calls = [r.mcp for r in records if r.mcp["method"] == "tools/call"]  # type: ignore[attr-defined]
    assert [(c["target"], c["outcome"]) for c in calls] == [
        ("fine", "ok"),
        ("broken", "tool_error"),
        ("missing", "error -32602"),
    ]
    assert all(c["era"] == "modern" and c["ms"] >= 0 for c in calls)
    assert not any("hunter2" in r.getMessage() for r in records)
