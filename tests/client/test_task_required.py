"""A tool that runs only as a task, called like any other: `client.call_tool(name, args)`
runs it as a task, waits for it and returns its CallToolResult, in 2026-07-28 (an
mcpgen Server, in memory and over Streamable HTTP: the refused plain call is sent again
declaring the Tasks extension) and in 2025-11-25 (server-everything's
`simulate-research-query`, whose `execution.taskSupport` is "required", over stdio and
Streamable HTTP: the call is task-augmented, polled, its elicitation answered while
`tasks/result` waits). Giving up the wait (cancelled, timed out) cancels the task;
`task=True` still gives the handle. The sans-I/O readers of the 2025-11-25 shapes on
their own."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpgen import (
    Client,
    ClientCallNext,
    ClientRequest,
    Context,
    InputRequired,
    McpError,
    ProtocolViolationError,
    Proxy,
    RequestTimeoutError,
    Server,
    TaskCancelledError,
    TaskFailedError,
    ToolTask,
    elicit_form,
)
from mcpgen._client._tasks import (
    legacy_created,
    legacy_offered,
    legacy_status,
    legacy_support,
    tasks_required,
)
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t
from tests import tooling
from tests.processes import LOOPBACK_ONLY, http_server
from tests.transports.httpharness import serve

FORM = {"type": "object", "properties": {"v": {"type": "string"}}}
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
RESEARCH = "simulate-research-query"


def build() -> tuple[Server, dict[str, Any]]:
    seen: dict[str, Any] = {"cancelled": 0, "runs": 0}
    server = Server("task-required", "1.0", task_poll_seconds=0.02)

    @server.tool(task="required")
    async def must(n: int) -> dict[str, int]:
        seen["runs"] += 1
        await asyncio.sleep(0.05)  # a few polls see it working
        return {"answer": n * 2}

    @server.tool(task="required")
    async def hang() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen["cancelled"] += 1
            raise
        return "never"

    @server.tool(task="required")
    def ask(ctx: Context) -> Any:
        answer = ctx.input("who")
        if answer is None:
            return InputRequired({"who": elicit_form("Who?", FORM)})
        return f"hello {answer.content['v']}"

    @server.tool(task="optional")
    async def maybe() -> str:
        return "done"

    return server, seen


async def answer(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"v": "Ada"})


class Sent:
    """A client middleware recording each request's method and params."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, request: ClientRequest, call_next: ClientCallNext) -> Any:
        self.requests.append((request.method, dict(request.params or {})))
        return await call_next(request)

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    def cancelled(self) -> list[str]:
        return [p["taskId"] for m, p in self.requests if m == "tasks/cancel"]


async def polled(sent: Sent) -> None:
    """Until a call started now has become a task being polled."""
    start = len(sent.requests)
    while "tasks/get" not in sent.methods()[start:]:
        await asyncio.sleep(0.02)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def over_http(client: Client) -> Callable[[Callable[[Client], Awaitable[None]]], None]:
    """Run checks on `client` once connected."""

    def checked(checks: Callable[[Client], Awaitable[None]]) -> None:
        async def main() -> None:
            async with client as c:
                await checks(c)

        run(main())

    return checked


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


# -- 2026-07-28, an mcpgen Server ------------------------------------------------------------------
async def _modern_checks(client: Client, sent: Sent, seen: dict[str, Any]) -> None:
    result = await client.call_tool("must", {"n": 21})
    assert isinstance(result, t.CallToolResult) and result.structured_content == {"answer": 42}
    assert seen["runs"] == 1  # refused without the extension, then run once as a task
    calls = [p for m, p in sent.requests if m == "tools/call"]
    assert len(calls) == 2 and "tasks/get" in sent.methods()
    assert text(await client.call_tool("ask")) == "hello Ada"  # input through tasks/update
    assert "tasks/update" in sent.methods()
    handle = await client.call_tool("must", {"n": 1}, task=True)  # asked: the handle
    assert isinstance(handle, ToolTask)
    assert (await handle.result(timeout=10)).structured_content == {"answer": 2}
    plain = await client.call_tool("maybe")  # "optional", not asked: no task
    assert text(plain) == "done"
    assert not isinstance(plain, ToolTask)


def test_a_task_only_tool_is_called_like_any_other_in_memory() -> None:
    server, seen = build()
    sent = Sent()

    async def main() -> None:
        async with Client.memory(server, on_elicitation=answer, middleware=[sent]) as c:
            assert c.era == "modern"
            await _modern_checks(c, sent, seen)

    run(main())


def test_a_task_only_tool_is_called_like_any_other_over_streamable_http() -> None:
    server, seen = build()
    sent = Sent()
    with serve(server.asgi_app()) as (url, _):
        over_http(Client.http(url, era="modern", on_elicitation=answer, middleware=[sent]))(
            lambda c: _modern_checks(c, sent, seen)
        )


def test_giving_up_the_wait_cancels_the_task() -> None:
    server, seen = build()
    sent = Sent()

    async def main() -> None:
        async with Client.memory(server, middleware=[sent]) as c:
            with pytest.raises(RequestTimeoutError):
                await c.call_tool("hang", timeout=1.0)
            (first,) = sent.cancelled()
            assert isinstance(await c.get_task(first), x.GetTaskResultCancelled)
            call = asyncio.ensure_future(c.call_tool("hang"))
            await polled(sent)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            assert len(sent.cancelled()) == 2
            second = sent.cancelled()[1]
            assert isinstance(await c.get_task(second), x.GetTaskResultCancelled)
            for _ in range(100):  # the work itself stops (the runner sees the cancel)
                if seen["cancelled"] == 2:
                    break
                await asyncio.sleep(0.02)
            assert seen["cancelled"] == 2
            # A handle the caller holds is not cancelled when its own wait gives up.
            handle = await c.call_tool("hang", task=True)
            assert isinstance(handle, ToolTask)
            with pytest.raises(TimeoutError):
                await handle.result(timeout=0.1)
            assert handle.id not in sent.cancelled()
            await handle.cancel()
            with pytest.raises(TaskCancelledError):
                await handle.result(timeout=5)

    run(main())


# -- 2025-11-25, server-everything -----------------------------------------------------------------
def _everything() -> list[str]:
    package = tooling.npm_package(EVERYTHING) / "@modelcontextprotocol" / "server-everything"
    entry = json.loads((package / "package.json").read_text())["bin"]
    entry = entry if isinstance(entry, str) else entry["mcp-server-everything"]
    return [tooling.node22(), str(package / entry)]


class Clarify:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, params: Any) -> t.ElicitResult:
        self.asked.append(params.message)
        return t.ElicitResult(action="accept", content={"interpretation": "historical"})


async def _legacy_checks(client: Client, sent: Sent, asked: Clarify) -> None:
    assert client.protocol_version == "2025-11-25"
    result = await client.call_tool(RESEARCH, {"topic": "owls", "ambiguous": True})
    assert isinstance(result, t.CallToolResult) and result.is_error is not True
    assert "# Research Report: owls (historical)" in text(result)
    assert len(asked.asked) == 1 and '"owls"' in asked.asked[0]
    (call,) = [p for m, p in sent.requests if m == "tools/call"]
    assert call["task"] == {"ttl": 3_600_000}
    methods = sent.methods()
    assert methods.index("tools/list") < methods.index("tools/call")  # support learnt first
    assert "tasks/get" in methods and methods[-1] == "tasks/result"
    handle = await client.call_tool(RESEARCH, {"topic": "bees"}, task=True)
    assert isinstance(handle, ToolTask) and handle.status == "working"
    assert handle.created.poll_interval_ms == 1000 and handle.created.ttl_ms == 300_000
    status = await handle.get()
    assert isinstance(status, x.GetTaskResultWorking) and status.task_id == handle.id
    done = await handle.result(timeout=30)
    assert "# Research Report: bees" in text(done)
    assert isinstance(handle.last, x.GetTaskResultCompleted)
    # The caller gives up: the task is cancelled on the server.
    call_task = asyncio.ensure_future(client.call_tool(RESEARCH, {"topic": "ants"}))
    await polled(sent)
    call_task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call_task
    (gone,) = sent.cancelled()
    assert isinstance(await client.get_task(gone), x.GetTaskResultCancelled)
    with pytest.raises(RequestTimeoutError):
        await client.call_tool(RESEARCH, {"topic": "wasps"}, timeout=2.5)
    assert len(sent.cancelled()) == 2
    assert isinstance(await client.get_task(sent.cancelled()[1]), x.GetTaskResultCancelled)
    echoed = await client.call_tool("echo", {"message": "hi"}, task=True)  # no task support
    assert isinstance(echoed, t.CallToolResult) and text(echoed) == "Echo: hi"


@pytest.mark.slow
@pytest.mark.needs_node
def test_a_2025_11_25_task_only_tool_over_stdio() -> None:
    sent, asked = Sent(), Clarify()

    async def main() -> None:
        client = Client.stdio(
            [*_everything(), "stdio"], on_elicitation=asked, middleware=[sent], timeout=30
        )
        async with client as c:
            assert c.era == "legacy"
            await _legacy_checks(c, sent, asked)

    run(main())


@pytest.mark.slow
@pytest.mark.needs_node
def test_a_2025_11_25_task_only_tool_over_streamable_http(tmp_path: Path) -> None:
    node, entry = _everything()
    preload = tmp_path / "loopback.cjs"
    preload.write_text(LOOPBACK_ONLY)
    sent, asked = Sent(), Clarify()

    def command(port: int) -> list[str]:
        return ["env", f"PORT={port}", node, "--require", str(preload), entry, "streamableHttp"]

    with http_server(command, tmp_path / "server.log") as url:
        over_http(Client.http(url, era="legacy", on_elicitation=asked, middleware=[sent]))(
            lambda c: _legacy_checks(c, sent, asked)
        )


@pytest.mark.slow
@pytest.mark.needs_node
def test_a_proxy_forwards_a_2025_11_25_task_only_tool() -> None:
    """The proxy's upstream client runs the tool as a task; the task's elicitation reaches
    the downstream client through the proxy, in either era."""

    async def main() -> None:
        for era in ("modern", "legacy"):
            asked = Clarify()
            proxy = Proxy([*_everything(), "stdio"], upstream_era="legacy", timeout=30)
            client = Client.memory(proxy, era=era, on_elicitation=asked, on_roots=list, timeout=30)
            async with client as c:
                result = await c.call_tool(RESEARCH, {"topic": "owls", "ambiguous": True})
                assert "# Research Report: owls (historical)" in text(result), era
                assert len(asked.asked) == 1, era

    run(main())


# -- 2025-11-25, a scripted server ----------------------------------------------------------------
SCRIPTED = [sys.executable, str(Path(__file__).with_name("legacy_task_server.py"))]


def test_2025_11_25_task_rules_against_a_scripted_server() -> None:
    """Progress under the call's token while the task runs, input through tasks/result,
    a failed task, "optional" tools plain unless asked, "forbidden" ones always plain,
    the tools listed once to learn their support."""
    sent = Sent()
    heard: list[tuple[float, float | None]] = []

    def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append((done, total))

    async def who(params: Any) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"who": "Ada"})

    async def main() -> None:
        client = Client.stdio(SCRIPTED, era="legacy", on_elicitation=who, middleware=[sent])
        async with client as c:
            assert text(await c.call_tool("slow", progress=progress)) == "slow done"
            assert heard and heard[0] == (1, 2)
            assert text(await c.call_tool("ask")) == "hello Ada"
            with pytest.raises(TaskFailedError) as failed:
                await c.call_tool("boom")
            assert (failed.value.code, failed.value.message) == (-32603, "boom")
            assert text(await c.call_tool("maybe")) == "maybe ran"  # "optional": plain
            handle = await c.call_tool("maybe", task=True)
            assert isinstance(handle, ToolTask) and handle.created.poll_interval_ms == 50
            assert text(await handle.result(timeout=10)) == "maybe done"
            plain = await c.call_tool("plain", task=True)  # no task support: plain
            assert isinstance(plain, t.CallToolResult) and text(plain) == "plain ran"
        calls = [p for m, p in sent.requests if m == "tools/call"]
        assert ["task" in p for p in calls] == [True, True, True, False, True, False]
        assert calls[0]["_meta"]["progressToken"]  # the task's progress token
        assert sent.methods().count("tools/list") == 1
        assert sent.methods()[0] == "tools/list"

    run(main())


# -- the sans-I/O readers --------------------------------------------------------------------------
TASK: dict[str, Any] = {
    "taskId": "t1",
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:01Z",
    "ttl": 60000,
    "pollInterval": 500,
}


def test_the_2025_11_25_shapes_read_as_the_extensions() -> None:
    offered: dict[str, Any] = {"tasks": {"requests": {"tools": {"call": {}}}}}
    assert legacy_offered("2025-11-25", offered)
    assert not legacy_offered("2025-06-18", offered)  # no core tasks before 2025-11-25
    assert not legacy_offered("2025-11-25", {"tasks": {"list": {}}})
    assert not legacy_offered("2025-11-25", {"tasks": {"requests": {"tools": {"call": True}}}})
    page = {
        "tools": [
            {"name": "a", "execution": {"taskSupport": "required"}},
            {"name": "b", "execution": {"taskSupport": "optional"}},
            {"name": "c"},
            {"name": "d", "execution": {"taskSupport": "sometimes"}},
            "junk",
        ]
    }
    assert legacy_support(page) == {
        "a": "required",
        "b": "optional",
        "c": "forbidden",
        "d": "forbidden",
    }
    created = legacy_created({"task": TASK, "_meta": {"k": 1}})
    assert created == x.CreateTaskResult(
        task_id="t1",
        status="working",
        created_at=TASK["createdAt"],
        last_updated_at=TASK["lastUpdatedAt"],
        ttl_ms=60000,
        poll_interval_ms=500,
        meta={"k": 1},
    )
    unlimited = legacy_created({"task": {**TASK, "ttl": None, "pollInterval": None}})
    assert unlimited.ttl_ms is None and unlimited.poll_interval_ms is msgspec.UNSET
    with pytest.raises(ProtocolViolationError):
        legacy_created({"task": "t1"})
    with pytest.raises(ProtocolViolationError):
        legacy_created({"task": {"taskId": "t1"}})
    asking = legacy_status({**TASK, "status": "input_required"})
    assert isinstance(asking, x.GetTaskResultInputRequired) and asking.input_requests == {}
    done = legacy_status({**TASK, "status": "completed"}, {"result": {"content": []}})
    assert isinstance(done, x.GetTaskResultCompleted) and done.result == {"content": []}
    failed = legacy_status({**TASK, "status": "failed"}, {"error": {"code": -1, "message": "x"}})
    assert isinstance(failed, x.GetTaskResultFailed) and failed.error.code == -1
    with pytest.raises(ProtocolViolationError):
        legacy_status({**TASK, "status": "completed"})  # an ended task needs its outcome


def test_a_refusal_for_want_of_the_extension() -> None:
    tasks: dict[str, Any] = {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    assert tasks_required(McpError(-32021, "needs tasks", tasks))
    assert not tasks_required(McpError(-32021, "needs roots", {"requiredCapabilities": {}}))
    assert not tasks_required(McpError(-32602, "bad", tasks))
    assert not tasks_required(McpError(-32021, "no data"))
