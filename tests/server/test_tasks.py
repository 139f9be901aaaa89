"""The Tasks extension (`io.modelcontextprotocol/tasks`) on the server: negotiation,
lifecycle, cancellation, expiry, isolation, input rounds inside tasks, detaching,
legacy sessions, malformed requests, listen notifications, and a transport."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpgen import Client as McpClient
from mcpgen import ConfigurationError, Context, InputRequired, McpError, Server, elicit_form
from mcpgen._server import DEFERRED
from mcpgen.stores import InMemoryBus, InMemoryTaskStore, TaskState
from mcpgen.transports import MemoryConnection
from tests.server.harness import Client, Recorder, request

TASKS = "io.modelcontextprotocol/tasks"
DECLARED = {"elicitation": {}, "extensions": {TASKS: {}}}
TERMINAL = ("completed", "failed", "cancelled")
SUB = "io.modelcontextprotocol/subscriptionId"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
FORM = {"type": "object", "properties": {"v": {"type": "string"}}}


def build(**options: Any) -> tuple[Server, dict[str, Any]]:
    seen: dict[str, Any] = {}
    server = Server("tasks-test", "1.0", **options)

    @server.tool
    def plain(name: str) -> str:
        return f"hi {name}"

    @server.tool(task="optional")
    async def slow(ctx: Context, seconds: float = 0.0) -> str:
        seen["task_id"] = ctx.task_id
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            seen["cancelled"] = ctx.cancelled
            raise
        return f"slept {seconds:g}"

    @server.tool(task="optional")
    def quick(x: int) -> dict[str, int]:
        return {"double": 2 * x}

    @server.tool(task="required")
    async def must() -> str:
        return "done"

    @server.tool(task="optional")
    async def broken() -> str:
        raise RuntimeError("kaboom")

    @server.tool(task="optional")
    async def refuse() -> str:
        raise McpError(-32099, "refused", {"why": "test"})

    @server.tool(task="optional")
    def ask(ctx: Context, item: str) -> Any:
        answer = ctx.input("confirm")
        if answer is None:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            return InputRequired({"confirm": elicit_form(f"Delete {item}?", schema)}, state=item)
        return f"{answer.action} {ctx.state} {answer.content}"

    @server.tool(task="optional")
    def two(ctx: Context) -> Any:
        a, b = ctx.input("a"), ctx.input("b")
        if a is None or b is None:
            return InputRequired({"a": elicit_form("A?", FORM), "b": elicit_form("B?", FORM)})
        return f"{a.content['v']}+{b.content['v']}"

    @server.tool(task="optional")
    def again(ctx: Context) -> Any:
        answers = list(ctx.state or [])
        answer = ctx.input("q")
        if answer is not None:
            answers.append(answer.content["v"])
        if len(answers) < 2:
            return InputRequired({"q": elicit_form(f"Q{len(answers) + 1}?", FORM)}, state=answers)
        return ",".join(answers)

    @server.tool(task="required", detach=True)
    async def staged(ctx: Context) -> Any:
        answer = ctx.input("name")
        if answer is None:
            return InputRequired({"name": elicit_form("Name?", FORM)})
        seen["before_detach"] = ctx.task_id
        await ctx.detach()
        seen["after_detach"] = ctx.task_id
        await asyncio.sleep(0.01)
        return f"Hello, {answer.content['v']}!"

    @server.tool(task="optional", detach=True)
    async def early(ctx: Context, stop: bool) -> str:
        if stop:
            return "returned before detaching"
        await ctx.detach()
        return f"as a task: {ctx.task_id is not None}"

    @server.tool(task="optional")
    async def stubborn(ctx: Context) -> Any:
        with contextlib.suppress(asyncio.CancelledError):  # swallowed: asks for input instead
            await asyncio.sleep(30)
        return InputRequired({"more": elicit_form("More?", FORM)})

    @server.tool(task="optional")
    async def report(ctx: Context) -> str:
        ctx.progress(1, 4, "a quarter done")
        await asyncio.sleep(30)
        return "never"

    return server, seen


@pytest.fixture
def built() -> tuple[Server, dict[str, Any]]:
    return build()


def run(
    server: Server, body: Callable[[Client], Awaitable[None]], channel: Recorder | None = None
) -> None:
    client = Client(server, channel)
    asyncio.run(asyncio.wait_for(body(client), 10))


async def send(
    c: Client,
    rid: Any,
    method: str,
    params: dict[str, Any],
    caps: dict[str, Any] | None = DECLARED,
    channel: Recorder | None = None,
) -> dict[str, Any]:
    reply = await c.areply(request(rid, method, params, caps=caps), channel)
    assert isinstance(reply, dict), reply
    return reply


async def call(c: Client, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
    return await send(c, "call", "tools/call", {"name": name, "arguments": args or {}}, **kw)


async def get(c: Client, task_id: str, **kw: Any) -> dict[str, Any]:
    return await send(c, "get", "tasks/get", {"taskId": task_id}, **kw)


async def settle(c: Client, task_id: str, until: tuple[str, ...] = TERMINAL) -> dict[str, Any]:
    for _ in range(500):
        result: dict[str, Any] = (await get(c, task_id))["result"]
        if result["status"] in until:
            return result
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} stuck in {result['status']}")


# -- negotiation -------------------------------------------------------------------------------
def test_discover_advertises_the_extension_and_legacy_does_not(built: Any) -> None:
    server, _ = built
    client = Client(server)
    discover = client.reply(request(1, "server/discover"))
    assert discover is not None
    caps = discover["result"]["capabilities"]
    assert caps["extensions"] == {TASKS: {}} and "tasks" not in caps
    init = client.initialize()
    assert "extensions" not in init["result"]["capabilities"]
    assert "tasks" not in init["result"]["capabilities"]


def test_without_task_tools_there_is_no_extension_and_no_tasks_methods() -> None:
    server = Server("plain")
    server.add_tool(lambda: "x", name="only")
    client = Client(server)
    discover = client.reply(request(1, "server/discover"))
    assert discover is not None and "extensions" not in discover["result"]["capabilities"]
    reply = client.reply(request(2, "tasks/get", {"taskId": "x"}, caps=DECLARED))
    assert reply is not None and reply["error"]["code"] == -32601


def test_a_client_without_the_extension_gets_ordinary_calls(built: Any) -> None:
    server, seen = built

    async def body(c: Client) -> None:
        plain = (await call(c, "slow", {"seconds": 0}, caps={}))["result"]
        assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "slept 0"
        assert seen["task_id"] is None
        required = await call(c, "must", caps={})
        assert required["error"]["code"] == -32021
        assert required["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        for method, params in [
            ("tasks/get", {"taskId": "nope"}),
            ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
            ("tasks/cancel", {"taskId": "nope"}),
        ]:
            reply = await send(c, 1, method, params, caps={"elicitation": {}})
            assert reply["error"]["code"] == -32021, method

    run(server, body)


def test_arguments_are_validated_before_any_task(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        bad = (await call(c, "slow", {"seconds": "soon"}))["result"]
        assert bad["isError"] is True and "taskId" not in bad
        unknown = await call(c, "nope")
        assert unknown["error"]["code"] == -32602

    run(server, body)


# -- lifecycle ---------------------------------------------------------------------------------
def test_create_poll_complete(built: Any) -> None:
    server, seen = built

    async def body(c: Client) -> None:
        created = (await call(c, "slow", {"seconds": 0.05}))["result"]
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
        assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1000
        for absent in ("task", "result", "error", "inputRequests", "requestState", "ttl"):
            assert absent not in created
        task_id = created["taskId"]
        first = (await get(c, task_id))["result"]  # durable at once
        assert first["taskId"] == task_id and first["resultType"] == "complete"
        done = await settle(c, task_id)
        assert done["status"] == "completed"
        assert done["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
        assert "io.modelcontextprotocol/related-task" not in done["result"].get("_meta", {})
        assert seen["task_id"] == task_id
        later = (await get(c, task_id))["result"]
        assert later == done  # idempotent read

    run(server, body)


def test_sync_handlers_and_structured_results_run_as_tasks(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "quick", {"x": 21}))["result"]["taskId"]
        done = await settle(c, task_id)
        assert done["result"]["structuredContent"] == {"double": 42}

    run(server, body)


def test_tool_errors_complete_and_protocol_errors_fail(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        broken = await settle(c, (await call(c, "broken"))["result"]["taskId"])
        assert broken["status"] == "completed" and broken["result"]["isError"] is True
        assert "kaboom" not in broken["result"]["content"][0]["text"]  # masked by default
        assert "failed (ref " in broken["result"]["content"][0]["text"]
        refused = await settle(c, (await call(c, "refuse"))["result"]["taskId"])
        assert refused["status"] == "failed" and "result" not in refused
        assert refused["error"] == {"code": -32099, "message": "refused", "data": {"why": "test"}}
        assert refused["statusMessage"] == "refused"

    run(server, body)


def test_cancel_running_and_finished_tasks(built: Any) -> None:
    server, seen = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "slow", {"seconds": 30}))["result"]["taskId"]
        await asyncio.sleep(0.01)
        ack = await send(c, 2, "tasks/cancel", {"taskId": task_id})
        assert set(ack["result"]) == {"resultType", "_meta"}
        assert ack["result"]["resultType"] == "complete"
        cancelled = (await get(c, task_id))["result"]
        assert cancelled["status"] == "cancelled"
        await asyncio.sleep(0.01)
        assert seen["cancelled"] is True  # the handler was cancelled and saw it
        again = await send(c, 3, "tasks/cancel", {"taskId": task_id})
        assert again["result"]["resultType"] == "complete"
        finished = (await call(c, "slow", {"seconds": 0}))["result"]["taskId"]
        await settle(c, finished)
        ack = await send(c, 4, "tasks/cancel", {"taskId": finished})
        assert ack["result"]["resultType"] == "complete"
        assert (await get(c, finished))["result"]["status"] == "completed"

    run(server, body)


def test_a_cancelled_task_stays_cancelled(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "stubborn"))["result"]["taskId"]
        await asyncio.sleep(0.01)
        await send(c, 2, "tasks/cancel", {"taskId": task_id})
        await asyncio.sleep(0.01)
        final = (await get(c, task_id))["result"]
        assert final["status"] == "cancelled" and "inputRequests" not in final

    run(server, body)


def test_progress_in_a_task_sets_the_status_message(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "report"))["result"]["taskId"]
        await asyncio.sleep(0.01)
        assert (await get(c, task_id))["result"]["statusMessage"] == "a quarter done"
        await send(c, 2, "tasks/cancel", {"taskId": task_id})

    run(server, body)


def test_unknown_ids_and_other_callers_get_the_same_error(built: Any) -> None:
    server, _ = built
    alice, bob = Recorder(principal="alice"), Recorder(principal="bob")

    async def body(c: Client) -> None:
        task_id = (await call(c, "slow", {"seconds": 30}, channel=alice))["result"]["taskId"]
        assert (await get(c, task_id, channel=alice))["result"]["taskId"] == task_id
        unknown = (await get(c, "no-such-task", channel=alice))["error"]
        for method in ("tasks/get", "tasks/cancel"):
            other = (await send(c, 1, method, {"taskId": task_id}, channel=bob))["error"]
            assert other["code"] == unknown["code"] == -32602
        update = {"taskId": task_id, "inputResponses": {}}
        assert (await send(c, 2, "tasks/update", update, channel=bob))["error"]["code"] == -32602
        assert (await get(c, task_id, channel=alice))["result"]["status"] == "working"
        await send(c, 3, "tasks/cancel", {"taskId": task_id}, channel=alice)

    run(server, body)


def test_tasks_expire_after_their_ttl() -> None:
    now = [time.time()]
    store = InMemoryTaskStore(clock=lambda: now[0])
    server, seen = build(task_ttl_seconds=10, task_poll_seconds=0.25, task_store=store)
    server.core.tasks.clock = lambda: now[0]

    async def body(c: Client) -> None:
        created = (await call(c, "slow", {"seconds": 30}))["result"]
        assert created["ttlMs"] == 10_000 and created["pollIntervalMs"] == 250
        task_id = created["taskId"]
        await asyncio.sleep(0.01)  # the handler is running
        now[0] += 9.9
        assert (await get(c, task_id))["result"]["status"] == "working"
        now[0] += 0.2
        assert (await get(c, task_id))["error"]["code"] == -32602
        await asyncio.sleep(0.01)
        assert seen["cancelled"] is True  # still running at expiry: cancelled
        assert task_id not in server.core.tasks.running
        assert await store.get(task_id) is None and len(store) == 0

    run(server, body)


def test_unlimited_ttl_is_null() -> None:
    server, _ = build(task_ttl_seconds=None)

    async def body(c: Client) -> None:
        assert (await call(c, "slow"))["result"]["ttlMs"] is None

    run(server, body)


def test_server_shutdown_cancels_running_tasks(built: Any) -> None:
    server, seen = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "slow", {"seconds": 30}))["result"]["taskId"]
        await asyncio.sleep(0.01)
        server.close()
        await asyncio.sleep(0.01)
        assert seen["cancelled"] is True
        assert server.core.tasks.running == {}
        record = await server.core.tasks.store.get(task_id)
        assert record is not None and record.status == "cancelled"
        assert record.status_message == "the server shut down"

    run(server, body)


# -- input rounds inside a task ----------------------------------------------------------------
def test_input_round_through_tasks_update(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "ask", {"item": "a.txt"}))["result"]["taskId"]
        waiting = await settle(c, task_id, ("input_required",))
        request_ = waiting["inputRequests"]["confirm"]
        assert request_["method"] == "elicitation/create"
        assert request_["params"]["message"] == "Delete a.txt?"
        assert "requestState" not in waiting
        wrong = {"taskId": task_id, "inputResponses": {"confirm": {"action": "maybe"}}}
        assert (await send(c, 2, "tasks/update", wrong))["error"]["code"] == -32602
        assert (await get(c, task_id))["result"]["status"] == "input_required"
        stray = {"taskId": task_id, "inputResponses": {"unknown-key": {"ignored": True}}}
        ack = (await send(c, 3, "tasks/update", stray))["result"]
        assert ack["resultType"] == "complete" and set(ack) == {"resultType", "_meta"}
        answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
        ack = await send(c, 5, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert ack["result"]["resultType"] == "complete" and "status" not in ack["result"]
        done = await settle(c, task_id)
        assert done["result"]["content"][0]["text"] == "accept a.txt {'ok': True}"
        late = await send(c, 6, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert late["result"]["resultType"] == "complete"  # nothing outstanding: ignored

    run(server, body)


def test_partial_answers_keep_the_task_waiting(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "two"))["result"]["taskId"]
        waiting = await settle(c, task_id, ("input_required",))
        assert sorted(waiting["inputRequests"]) == ["a", "b"]
        one = {"a": {"action": "accept", "content": {"v": "1"}}}
        await send(c, 2, "tasks/update", {"taskId": task_id, "inputResponses": one})
        still = (await get(c, task_id))["result"]
        assert still["status"] == "input_required" and list(still["inputRequests"]) == ["b"]
        both = {**one, "b": {"action": "accept", "content": {"v": "2"}}}  # "a" again: ignored
        await send(c, 3, "tasks/update", {"taskId": task_id, "inputResponses": both})
        assert (await settle(c, task_id))["result"]["content"][0]["text"] == "1+2"

    run(server, body)


def test_input_keys_are_never_reused_within_a_task(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "again"))["result"]["taskId"]
        first = await settle(c, task_id, ("input_required",))
        assert list(first["inputRequests"]) == ["q"]
        answer = {"q": {"action": "accept", "content": {"v": "x"}}}
        await send(c, 2, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        await asyncio.sleep(0.01)
        second = await settle(c, task_id, ("input_required",))
        assert list(second["inputRequests"]) == ["q.2"]
        assert second["inputRequests"]["q.2"]["params"]["message"] == "Q2?"
        stale = await send(c, 3, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert stale["result"]["resultType"] == "complete"
        assert (await get(c, task_id))["result"]["status"] == "input_required"
        renamed = {"q.2": {"action": "accept", "content": {"v": "y"}}}
        await send(c, 4, "tasks/update", {"taskId": task_id, "inputResponses": renamed})
        assert (await settle(c, task_id))["result"]["content"][0]["text"] == "x,y"

    run(server, body)


def test_input_the_client_cannot_give_fails_the_task(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        caps = {"extensions": {TASKS: {}}}  # no elicitation
        task_id = (await call(c, "ask", {"item": "x"}, caps=caps))["result"]["taskId"]
        for _ in range(100):
            failed = (await get(c, task_id, caps=caps))["result"]
            if failed["status"] == "failed":
                break
            await asyncio.sleep(0.01)
        assert failed["error"]["code"] == -32021

    run(server, body)


def test_cancel_while_waiting_for_input(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "ask", {"item": "x"}))["result"]["taskId"]
        await settle(c, task_id, ("input_required",))
        await send(c, 2, "tasks/cancel", {"taskId": task_id})
        cancelled = (await get(c, task_id))["result"]
        assert cancelled["status"] == "cancelled" and "inputRequests" not in cancelled

    run(server, body)


# -- detaching -------------------------------------------------------------------------------------
def test_input_rounds_in_the_request_then_a_task(built: Any) -> None:
    server, seen = built

    async def body(c: Client) -> None:
        first = (await call(c, "staged"))["result"]
        assert first["resultType"] == "input_required" and "taskId" not in first
        retry = {
            "name": "staged",
            "arguments": {},
            "requestState": first["requestState"],
            "inputResponses": {"name": {"action": "accept", "content": {"v": "Alice"}}},
        }
        created = (await send(c, 2, "tools/call", retry))["result"]
        assert created["resultType"] == "task"
        assert "requestState" not in created and "inputRequests" not in created
        done = await settle(c, created["taskId"])
        assert done["result"]["content"][0]["text"] == "Hello, Alice!"
        assert seen["before_detach"] is None and seen["after_detach"] == created["taskId"]
        refused = await call(c, "staged", caps={"elicitation": {}})
        assert refused["error"]["code"] == -32021

    run(server, body)


def test_a_detachable_handler_may_answer_in_the_request(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        plain = (await call(c, "early", {"stop": True}))["result"]
        assert plain["resultType"] == "complete"
        assert plain["content"][0]["text"] == "returned before detaching"
        task_id = (await call(c, "early", {"stop": False}))["result"]["taskId"]
        assert (await settle(c, task_id))["result"]["content"][0]["text"] == "as a task: True"
        undeclared = (await call(c, "early", {"stop": False}, caps={}))["result"]
        assert undeclared["content"][0]["text"] == "as a task: False"  # detach(): a no-op

    run(server, body)


def test_registration_errors() -> None:
    server = Server("t")
    with pytest.raises(ConfigurationError, match="task must be"):
        server.add_tool(lambda: "x", name="a", task="always")
    with pytest.raises(ConfigurationError, match="detach=True"):
        server.add_tool(lambda: "x", name="b", detach=True)

    async def handler() -> str:
        return "x"

    with pytest.raises(ConfigurationError, match="detach=True"):
        server.add_tool(handler, name="c", detach=True)
    with pytest.raises(ConfigurationError, match="detach=True"):
        server.add_tool(lambda: "x", name="d", task="optional", detach=True)
    with pytest.raises(ConfigurationError, match="task_ttl_seconds"):
        Server("t", task_ttl_seconds=0)


# -- legacy sessions and malformed requests ------------------------------------------------------
def test_legacy_sessions_never_get_tasks(built: Any) -> None:
    server, _ = built
    client = Client(server)
    client.initialize(caps={"extensions": {TASKS: {}}, "elicitation": {}})
    legacy = {"name": "slow", "arguments": {"seconds": 0}, "task": {"ttl": 60000}}
    optional = client.reply(request(1, "tools/call", legacy, modern=False))
    assert optional is not None and optional["result"]["content"][0]["text"] == "slept 0"
    assert "taskId" not in optional["result"] and "task" not in optional["result"]
    required = client.reply(request(2, "tools/call", {"name": "must"}, modern=False))
    assert required is not None and required["error"]["code"] == -32602
    assert "2026-07-28" in required["error"]["message"]
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"):
        reply = client.reply(request(3, method, {"taskId": "x"}, modern=False))
        assert reply is not None and reply["error"]["code"] == -32601, method


def test_the_legacy_task_param_is_ignored_on_modern_requests(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task = {"ttl": 1, "pollInterval": 1}
        params = {"name": "plain", "arguments": {"name": "x"}, "task": task}
        result = (await send(c, 1, "tools/call", params))["result"]
        assert result["resultType"] == "complete" and "taskId" not in result

    run(server, body)


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("tasks/get", {}, -32602),
        ("tasks/get", {"taskId": 7}, -32602),
        ("tasks/get", {"taskId": None}, -32602),
        ("tasks/update", {"taskId": "x"}, -32602),
        ("tasks/update", {"taskId": "x", "inputResponses": []}, -32602),
        ("tasks/update", {"taskId": "x", "inputResponses": {"k": 5}}, -32602),
        ("tasks/cancel", {"taskId": ["x"]}, -32602),
        ("tasks/result", {"taskId": "x"}, -32601),
        ("tasks/list", {}, -32601),
    ],
)
def test_malformed_tasks_requests_get_json_rpc_errors(
    built: Any, method: str, params: dict[str, Any], code: int
) -> None:
    server, _ = built
    reply = Client(server).reply(request(1, method, params, caps=DECLARED))
    assert reply is not None and reply["error"]["code"] == code


def test_mcp_name_must_match_the_task_id(built: Any) -> None:
    server, _ = built

    def headers(name: str) -> Recorder:
        return Recorder(
            headers={
                "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tasks/get",
                "mcp-name": name,
            }
        )

    async def body(c: Client) -> None:
        task_id = (await call(c, "slow", {"seconds": 30}))["result"]["taskId"]
        ok = await get(c, task_id, channel=headers(task_id))
        assert ok["result"]["taskId"] == task_id
        mismatch = await get(c, task_id, channel=headers("another-task"))
        assert mismatch["error"]["code"] == -32020
        await send(c, 2, "tasks/cancel", {"taskId": task_id})

    run(server, body)


# -- notifications/tasks on subscriptions/listen --------------------------------------------------
def test_listen_for_task_status(built: Any) -> None:
    server, _ = built

    async def body(c: Client) -> None:
        task_id = (await call(c, "ask", {"item": "x"}))["result"]["taskId"]
        await settle(c, task_id, ("input_required",))
        stream = Recorder()
        filters = {"notifications": {"taskIds": [task_id, "unknown"]}}
        # The ids are checked against the task store (async), then the stream stays open.
        out = await c.areply(request(9, "subscriptions/listen", filters, caps=DECLARED), stream)
        assert out is DEFERRED
        (ack,) = stream.take()
        assert ack["params"]["notifications"] == {"taskIds": [task_id]}
        answer = {"confirm": {"action": "decline"}}
        await send(c, 2, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        await settle(c, task_id)
        frames = stream.take()
        assert [f["method"] for f in frames] == ["notifications/tasks"] * 2
        assert [f["params"]["status"] for f in frames] == ["working", "completed"]
        assert all(f["params"]["_meta"] == {SUB: 9} for f in frames)
        assert frames[1]["params"]["result"]["content"][0]["text"].startswith("decline x")
        refused = await send(c, 10, "subscriptions/listen", filters, caps={})
        assert refused["error"]["code"] == -32021

    run(server, body)


# -- over a transport ----------------------------------------------------------------------------
def test_a_task_over_the_memory_transport(built: Any) -> None:
    server, _ = built

    async def body() -> None:
        connection = MemoryConnection(server)

        async def ask(rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            await connection.send(request(rid, method, params, caps=DECLARED))
            reply: dict[str, Any] = json.loads(await connection.receive())
            assert reply["id"] == rid
            return reply

        created = await ask(1, "tools/call", {"name": "slow", "arguments": {"seconds": 0.02}})
        task_id = created["result"]["taskId"]
        for rid in range(2, 200):
            status = (await ask(rid, "tasks/get", {"taskId": task_id}))["result"]
            if status["status"] == "completed":
                break
            await asyncio.sleep(0.01)
        assert status["result"]["content"][0]["text"] == "slept 0.02"
        await connection.close()

    asyncio.run(asyncio.wait_for(body(), 10))


def test_an_ordinary_client_gets_ordinary_results(built: Any) -> None:
    server, _ = built

    async def body() -> None:
        async with McpClient.memory(server, era="modern") as client:
            result = await client.call_tool("slow", {"seconds": 0})
            assert result.content[0].text == "slept 0"  # type: ignore[union-attr]
            with pytest.raises(McpError) as caught:  # a plain request is refused
                await client.request("tools/call", {"name": "must", "arguments": {}})
            assert caught.value.code == -32021
            # call_tool sends it again declaring the extension and waits for the task
            done = await client.call_tool("must")
            assert done.content[0].text == "done"  # type: ignore[union-attr]

    asyncio.run(asyncio.wait_for(body(), 10))


# -- several workers sharing a task store and a bus ---------------------------------------------
def test_workers_sharing_a_store_and_a_bus_answer_for_each_others_tasks() -> None:
    """Worker A runs the task; worker B, with the same store and bus (in-memory here,
    shared ones in a deployment), answers tasks/get from the store, streams its status
    to a listen stream, and a tasks/cancel on B stops the work on A."""
    store, bus = InMemoryTaskStore(), InMemoryBus()
    server_a, seen_a = build(task_store=store, bus=bus)
    server_b, _ = build(task_store=store, bus=bus)

    async def body() -> None:
        a, b = Client(server_a), Client(server_b)
        task_id = (await call(a, "slow", {"seconds": 30}))["result"]["taskId"]
        await asyncio.sleep(0.01)
        assert (await get(b, task_id))["result"]["status"] == "working"
        other = await get(b, task_id, caps=DECLARED, channel=Recorder(principal="mallory"))
        assert other["error"]["code"] == -32602
        stream = Recorder()
        filters = {"notifications": {"taskIds": [task_id]}}
        listen = request(7, "subscriptions/listen", filters, caps=DECLARED)
        assert await b.areply(listen, stream) is DEFERRED
        stream.take()  # the ack
        cancelled = await send(b, 8, "tasks/cancel", {"taskId": task_id})
        assert "error" not in cancelled
        await asyncio.sleep(0.01)
        assert seen_a["cancelled"] is True  # A saw the status change on the bus
        assert task_id not in server_a.core.tasks.running
        assert (await get(a, task_id))["result"]["status"] == "cancelled"
        (note,) = stream.take()
        assert note["method"] == "notifications/tasks"
        assert note["params"]["status"] == "cancelled" and note["params"]["_meta"] == {SUB: 7}

    asyncio.run(asyncio.wait_for(body(), 10))


class SlowStore(InMemoryTaskStore):
    """A store whose writes take event-loop turns, as a networked one's do; the second
    write (the first after creation) is much slower than the ones after it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.written: list[str] = []

    async def put(self, state: TaskState) -> None:
        self.calls += 1
        for _ in range(20 if self.calls == 2 else 1):
            await asyncio.sleep(0)
        self.written.append(state.status)
        await super().put(state)


def test_a_slow_store_still_ends_with_the_newest_state() -> None:
    """Progress is written from synchronous code while the outcome is written from the
    task: one write per task at a time, the last one the newest, so a slow progress
    write cannot land after the outcome and put a finished task back to working."""
    store = SlowStore()
    server = Server("slow-store", task_store=store)

    @server.tool(task="optional")
    async def hurried(ctx: Context) -> str:
        ctx.progress(1, 2, "half way")
        await asyncio.sleep(0)  # the progress write is under way
        return "done"

    async def body(c: Client) -> None:
        task_id = (await call(c, "hurried"))["result"]["taskId"]
        await asyncio.sleep(0.05)
        final = (await get(c, task_id))["result"]
        assert final["status"] == "completed"
        assert final["statusMessage"] == "half way"
        assert store.written == ["working", "working", "completed"]

    run(server, body)


def test_input_for_a_task_reaches_the_worker_running_it_over_the_bus() -> None:
    store, bus = InMemoryTaskStore(), InMemoryBus()
    server_a, _ = build(task_store=store, bus=bus)
    server_b, _ = build(task_store=store, bus=bus)

    async def body() -> None:
        a, b = Client(server_a), Client(server_b)
        task_id = (await call(a, "ask", {"item": "x"}))["result"]["taskId"]
        waiting = await settle(b, task_id, ("input_required",))
        assert list(waiting["inputRequests"]) == ["confirm"]
        update = {"taskId": task_id, "inputResponses": {"confirm": {"action": "decline"}}}
        assert "error" not in await send(b, 2, "tasks/update", update)  # forwarded to a
        done = await settle(b, task_id)
        assert done["status"] == "completed"
        assert done == await settle(a, task_id)

    asyncio.run(asyncio.wait_for(body(), 10))


def test_a_forwarded_partial_answer_is_taken_before_the_ack() -> None:
    """tasks/update on a worker that does not run the task is acknowledged only once the
    owner has taken the answers: a tasks/get right after the ack, on either worker, shows
    the answered key gone and the other one still asked (the conformance suite's
    partial-fulfillment check through a cluster)."""
    store, bus = InMemoryTaskStore(), InMemoryBus()
    server_a, _ = build(task_store=store, bus=bus)
    server_b, _ = build(task_store=store, bus=bus)

    async def body() -> None:
        a, b = Client(server_a), Client(server_b)
        task_id = (await call(a, "two"))["result"]["taskId"]
        await settle(b, task_id, ("input_required",))
        one = {"a": {"action": "accept", "content": {"v": "1"}}}
        ack = await send(b, 2, "tasks/update", {"taskId": task_id, "inputResponses": one})
        assert ack["result"]["resultType"] == "complete"
        for worker in (b, a):
            still = (await get(worker, task_id))["result"]
            assert still["status"] == "input_required" and list(still["inputRequests"]) == ["b"]
        bad = {"b": {"action": "maybe"}}  # judged where it lands, against the record
        wrong = await send(b, 3, "tasks/update", {"taskId": task_id, "inputResponses": bad})
        assert wrong["error"]["code"] == -32602
        two = {"b": {"action": "accept", "content": {"v": "2"}}}
        await send(b, 4, "tasks/update", {"taskId": task_id, "inputResponses": two})
        assert (await settle(b, task_id))["result"]["content"][0]["text"] == "1+2"

    asyncio.run(asyncio.wait_for(body(), 10))


def test_a_forwarded_answer_nobody_takes_is_an_error_not_an_ack() -> None:
    """When the owner never takes forwarded answers (it died), the update fails with an
    error saying so instead of acknowledging answers that went nowhere."""
    store, bus = InMemoryTaskStore(), InMemoryBus()
    server_a, _ = build(task_store=store, bus=bus)
    server_b, _ = build(task_store=store, bus=InMemoryBus())  # hears nothing, reaches nobody

    async def no_wait(seconds: float) -> None:
        await asyncio.sleep(0)  # the 5 s the forwarder would wait, without the wall time

    server_b.core.tasks.sleep = no_wait

    async def body() -> None:
        a, b = Client(server_a), Client(server_b)
        task_id = (await call(a, "two"))["result"]["taskId"]
        await settle(b, task_id, ("input_required",))
        one = {"a": {"action": "accept", "content": {"v": "1"}}}
        lost = await send(b, 2, "tasks/update", {"taskId": task_id, "inputResponses": one})
        assert lost["error"]["code"] == -32603
        assert "did not take the answers" in lost["error"]["message"]
        assert sorted((await get(a, task_id))["result"]["inputRequests"]) == ["a", "b"]
        stray = {"zz": {"action": "accept"}}  # nothing outstanding to wait for: acked at once
        assert "error" not in await send(
            b, 3, "tasks/update", {"taskId": task_id, "inputResponses": stray}
        )

    asyncio.run(asyncio.wait_for(body(), 10))


def test_a_forwarded_update_carries_only_the_outstanding_answers() -> None:
    """A tasks/update that lands on a worker not running the task puts on the bus only
    the answers to requests still outstanding: answers to nothing asked send nothing,
    and extra members (any size) never travel to every worker."""
    store, bus = InMemoryTaskStore(), InMemoryBus()
    server_a, _ = build(task_store=store, bus=bus)
    server_b, _ = build(task_store=store, bus=bus)
    forwarded: list[Any] = []
    bus.subscribe(
        lambda event: forwarded.append(event) if type(event).__name__ == "ReplyEvent" else None
    )

    async def body() -> None:
        a, b = Client(server_a), Client(server_b)
        task_id = (await call(a, "two"))["result"]["taskId"]
        await settle(b, task_id, ("input_required",))
        junk = {f"k{i}": {"action": "accept", "pad": "x" * 1000} for i in range(200)}
        ack = await send(b, 2, "tasks/update", {"taskId": task_id, "inputResponses": junk})
        assert "error" not in ack
        assert forwarded == []  # nothing asked was answered: nothing sent
        one = {"a": {"action": "accept", "content": {"v": "1"}}}
        update = {"taskId": task_id, "inputResponses": {**junk, **one}}
        assert "error" not in await send(b, 3, "tasks/update", update)
        assert len(forwarded) == 1 and len(forwarded[0].frame) < 200
        assert b"pad" not in forwarded[0].frame and b"k199" not in forwarded[0].frame

    asyncio.run(asyncio.wait_for(body(), 10))
