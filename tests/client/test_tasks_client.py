"""mcpgen.Client and the Tasks extension (`io.modelcontextprotocol/tasks`): declaring it
per request, the task handle, polling at the server's interval, input requests answered
by the callbacks, cancellation, failure, timeouts, listen, the legacy era; the sans-I/O
pieces (ClientCore, TaskWatch) on their own; one run over Streamable HTTP."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import msgspec
import pytest

from mcpgen import (
    Client,
    ConfigurationError,
    Context,
    InputRequired,
    McpError,
    ProtocolViolationError,
    Server,
    TaskCancelledError,
    TaskFailedError,
    ToolTask,
    elicit_form,
)
from mcpgen._client import ClientCore, Done, NeedInput, TaskWatch, Wait
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t
from tests.transports.httpharness import serve

TASKS = "io.modelcontextprotocol/tasks"
CAPS = "io.modelcontextprotocol/clientCapabilities"
FORM = {"type": "object", "properties": {"v": {"type": "string"}}}


def build(poll: float = 0.02) -> tuple[Server, dict[str, Any]]:
    seen: dict[str, Any] = {"cancelled": False}
    server = Server("tasks-client-test", "1.0", task_poll_seconds=poll)

    @server.tool
    def plain(name: str) -> str:
        return f"hi {name}"

    @server.tool(task="optional")
    async def slow(seconds: float = 0.0) -> str:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return f"slept {seconds:g}"

    @server.tool(task="required")
    async def must() -> dict[str, int]:
        return {"answer": 42}

    @server.tool(task="optional")
    async def refuse() -> str:
        raise McpError(-32099, "refused", {"why": "test"})

    @server.tool(task="optional")
    async def broken() -> str:
        raise RuntimeError("kaboom")

    @server.tool(task="optional")
    def ask(ctx: Context, item: str) -> Any:
        answer = ctx.input("confirm")
        if answer is None:
            return InputRequired({"confirm": elicit_form(f"Delete {item}?", FORM)}, state=item)
        return f"{answer.action} {ctx.state} {answer.content}"

    @server.tool(task="optional")
    async def again(ctx: Context) -> Any:
        answers = list(ctx.state or [])
        answer = ctx.input("q")
        if answer is not None:
            answers.append(answer.content["v"])
        if len(answers) < 2:
            await asyncio.sleep(0.05)  # a few polls see it working
            return InputRequired({"q": elicit_form(f"Q{len(answers) + 1}?", FORM)}, state=answers)
        return ",".join(answers)

    @server.tool(task="required", detach=True)
    async def staged(ctx: Context) -> Any:
        answer = ctx.input("name")
        if answer is None:  # asked inside the request (multi round-trip), before the task
            return InputRequired({"name": elicit_form("Name?", FORM)})
        await ctx.detach()
        await asyncio.sleep(0.02)
        return f"Hello, {answer.content['v']}! (task {ctx.task_id is not None})"

    @server.tool(task="optional", detach=True)
    async def early(ctx: Context, stop: bool) -> str:
        if stop:
            return "answered directly"
        await ctx.detach()
        return "as a task"

    return server, seen


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))


class Asker:
    """An elicitation callback that answers in turn and records each question."""

    def __init__(self, *values: str) -> None:
        self.values = list(values)
        self.asked: list[str] = []

    async def __call__(self, params: Any) -> t.ElicitResult:
        self.asked.append(params.message)
        value = self.values[len(self.asked) - 1] if self.values else "yes"
        return t.ElicitResult(action="accept", content={"v": value})


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


# -- the asyncio API, in memory --------------------------------------------------------------------
def test_a_task_that_completes() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            handle = await c.call_tool("slow", {"seconds": 0.05}, task=True)
            assert isinstance(handle, ToolTask)
            assert handle.status == "working" and isinstance(handle.created, x.CreateTaskResult)
            assert handle.created.poll_interval_ms == 20
            result = await handle.result(timeout=5)
            assert isinstance(result, t.CallToolResult) and text(result) == "slept 0.05"
            assert handle.status == "completed"
            status = await c.get_task(handle.id)
            assert isinstance(status, x.GetTaskResultCompleted)
            assert status.result["content"][0]["text"] == "slept 0.05"
            again = await c.wait_task(handle.id, timeout=5)  # by id; a finished task at once
            assert text(again) == "slept 0.05"

    run(main())


def test_the_server_may_answer_a_declaring_call_directly() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            direct = await c.call_tool("early", {"stop": True}, task=True)  # task="optional"
            assert isinstance(direct, t.CallToolResult) and text(direct) == "answered directly"
            handle = await c.call_tool("early", {"stop": False}, task=True)
            assert isinstance(handle, ToolTask)
            assert text(await handle.result(timeout=5)) == "as a task"
            plain = await c.call_tool("plain", {"name": "Ada"}, task=True)  # no task support
            assert isinstance(plain, t.CallToolResult) and text(plain) == "hi Ada"
            ordinary = await c.call_tool("slow", {"seconds": 0})  # not declared: no task
            assert isinstance(ordinary, t.CallToolResult) and text(ordinary) == "slept 0"

    run(main())


def test_a_tool_that_runs_only_as_a_task() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            # Refused without the extension (-32021), sent again declaring it, waited for.
            direct = await c.call_tool("must")
            assert isinstance(direct, t.CallToolResult)
            assert direct.structured_content == {"answer": 42}
            with pytest.raises(McpError) as caught:
                await c.request("tools/call", {"name": "must", "arguments": {}})
            assert caught.value.code == -32021
            assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
            handle = await c.call_tool("must", task=True)
            assert isinstance(handle, ToolTask)
            result = await handle.result(timeout=5)
            assert result.structured_content == {"answer": 42}

    run(main())


def test_input_requests_are_answered_by_the_callback_and_the_task_resumes() -> None:
    server, _ = build()
    asker = Asker("x", "y")

    async def main() -> None:
        async with Client.memory(server, on_elicitation=asker) as c:
            handle = await c.call_tool("ask", {"item": "a.txt"}, task=True)
            assert isinstance(handle, ToolTask)
            result = await handle.result(timeout=5)
            assert text(result) == "accept a.txt {'v': 'x'}"
            assert asker.asked == ["Delete a.txt?"]
            # Two rounds inside one task (keys "q", then "q.2"): each question put once.
            asker.asked.clear()
            handle = await c.call_tool("again", task=True)
            assert isinstance(handle, ToolTask)
            assert text(await handle.result(timeout=5)) == "x,y"
            assert asker.asked == ["Q1?", "Q2?"]

    run(main())


def test_input_before_the_task_goes_through_the_request_rounds() -> None:
    server, _ = build()
    asker = Asker("Ada")

    async def main() -> None:
        async with Client.memory(server, on_elicitation=asker) as c:
            handle = await c.call_tool("staged", task=True)
            assert isinstance(handle, ToolTask) and asker.asked == ["Name?"]
            assert text(await handle.result(timeout=5)) == "Hello, Ada! (task True)"

    run(main())


def test_answering_input_by_hand() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server, on_elicitation=Asker()) as c:
            handle = await c.call_tool("ask", {"item": "b"}, task=True)
            assert isinstance(handle, ToolTask)
            status: Any = None
            for _ in range(200):
                status = await handle.get()
                if handle.status == "input_required":
                    break
                await asyncio.sleep(0.01)
            assert isinstance(status, x.GetTaskResultInputRequired)
            assert list(status.input_requests) == ["confirm"]
            await handle.update({"confirm": t.ElicitResult(action="decline")})
            assert text(await handle.result(timeout=5)).startswith("decline b ")

    run(main())


def test_cancellation() -> None:
    server, seen = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            handle = await c.call_tool("slow", {"seconds": 30}, task=True)
            assert isinstance(handle, ToolTask)
            waiting = asyncio.ensure_future(handle.result(timeout=10))
            await asyncio.sleep(0.05)
            assert not waiting.done()
            await handle.cancel()
            with pytest.raises(TaskCancelledError) as caught:
                await asyncio.wait_for(waiting, 5)
            assert caught.value.task_id == handle.id
            assert caught.value.message == "cancelled by the client"
            assert seen["cancelled"] is True
            assert isinstance(await c.get_task(handle.id), x.GetTaskResultCancelled)
            await c.cancel_task(handle.id)  # again: acknowledged, nothing changes
            with pytest.raises(TaskCancelledError):
                await c.wait_task(handle.id, timeout=5)

    run(main())


def test_a_protocol_error_fails_the_task_and_a_tool_error_completes_it() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            handle = await c.call_tool("refuse", task=True)
            assert isinstance(handle, ToolTask)
            with pytest.raises(TaskFailedError) as caught:
                await handle.result(timeout=5)
            failed = caught.value
            assert isinstance(failed, McpError)
            assert (failed.task_id, failed.code, failed.message) == (handle.id, -32099, "refused")
            assert failed.data == {"why": "test"}
            assert handle.status == "failed"
            broken = await c.call_tool("broken", task=True)
            assert isinstance(broken, ToolTask)
            result = await broken.result(timeout=5)
            assert result.is_error is True and "failed (ref " in text(result)  # masked

    run(main())


def test_a_poll_timeout_leaves_the_task_running() -> None:
    server, seen = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            handle = await c.call_tool("slow", {"seconds": 30}, task=True)
            assert isinstance(handle, ToolTask)
            started = asyncio.get_running_loop().time()
            with pytest.raises(TimeoutError, match=r"still working after 0\.2 s"):
                await handle.result(timeout=0.2)
            assert asyncio.get_running_loop().time() - started < 2
            assert isinstance(await handle.get(), x.GetTaskResultWorking)
            assert seen["cancelled"] is False
            await handle.cancel()

    run(main())


def test_polling_honours_the_servers_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    server, _ = build(poll=0.2)

    async def main() -> None:
        async with Client.memory(server) as c:
            gets = []
            original = c.tasks.get_task

            async def counted(task_id: str, **kw: Any) -> Any:
                gets.append(asyncio.get_running_loop().time())
                return await original(task_id, **kw)

            monkeypatch.setattr(c.tasks, "get_task", counted)  # where handles poll
            handle = await c.call_tool("slow", {"seconds": 0.5}, task=True)
            assert isinstance(handle, ToolTask)
            await handle.result(timeout=5, poll=0.01)  # a shorter wish: the server's wins
            assert 2 <= len(gets) <= 4, gets
            assert all(b - a >= 0.18 for a, b in itertools.pairwise(gets)), gets
            gets.clear()
            handle = await c.call_tool("slow", {"seconds": 0.5}, task=True)
            assert isinstance(handle, ToolTask)
            await handle.result(timeout=5, poll=0.35)  # a longer one: the client's wins
            assert 1 <= len(gets) <= 2, gets

    run(main())


def test_unknown_task_ids() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server) as c:
            for call in (c.get_task("nope"), c.cancel_task("nope"), c.wait_task("nope")):
                with pytest.raises(McpError) as caught:
                    await call
                assert caught.value.code == -32602

    run(main())


def test_listen_for_task_status() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server, on_elicitation=Asker("z")) as c:
            handle = await c.call_tool("ask", {"item": "n"}, task=True)
            assert isinstance(handle, ToolTask)
            got: list[Any] = []

            async def consume() -> None:
                async for note in c.listen(task_ids=[handle.id]):
                    got.append(note)
                    if type(note.params).__struct_config__.tag == "completed":
                        break

            listening = asyncio.ensure_future(consume())
            await asyncio.sleep(0.05)
            await handle.result(timeout=5)
            await asyncio.wait_for(listening, 5)
            assert all(isinstance(n, x.TaskStatusNotification) for n in got)
            assert all(n.params.task_id == handle.id for n in got)
            last = got[-1].params
            assert isinstance(last, x.TaskStatusNotificationParamsCompleted)
            assert last.result["content"][0]["text"] == "accept n {'v': 'z'}"

    run(main())


def test_the_legacy_era_has_no_tasks() -> None:
    server, _ = build()

    async def main() -> None:
        async with Client.memory(server, era="legacy") as c:
            result = await c.call_tool("slow", {"seconds": 0}, task=True)  # an ordinary call
            assert isinstance(result, t.CallToolResult) and text(result) == "slept 0"
            with pytest.raises(McpError) as caught:
                await c.call_tool("must", task=True)
            assert caught.value.code == -32602 and "2026-07-28" in caught.value.message
            for call in (
                c.get_task("x"),
                c.cancel_task("x"),
                c.update_task("x", {}),
                c.wait_task("x"),
            ):
                with pytest.raises(ConfigurationError, match="no such tasks"):
                    await call
            with pytest.raises(ConfigurationError, match="modern era"):
                await anext(aiter(c.listen(task_ids=["x"])))

    run(main())


# -- the sans-I/O pieces ---------------------------------------------------------------------------
def _core() -> ClientCore:
    core = ClientCore(t.Implementation(name="c", version="1"), {"elicitation": {}})
    core.adopt_modern()
    return core


def test_only_a_declaring_request_carries_the_extension() -> None:
    core = _core()
    _, sent, frame = core.request("tools/call", {"name": "a", "arguments": {}})
    assert sent["_meta"][CAPS] == {"elicitation": {}}
    assert TASKS not in frame.decode()
    _, sent, _ = core.request("tools/call", {"name": "a"}, capabilities=core.task_capabilities)
    assert sent["_meta"][CAPS] == {"elicitation": {}, "extensions": {TASKS: {}}}
    assert core.capabilities == {"elicitation": {}}  # the client's own are untouched


def test_a_task_result_counts_only_where_declared() -> None:
    core = _core()
    raw = json.dumps(
        {
            "resultType": "task",
            "taskId": "t1",
            "status": "working",
            "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttlMs": None,
        }
    ).encode()
    created = core.result("tools/call", msgspec.Raw(raw), tasks=True)
    assert isinstance(created, x.CreateTaskResult) and created.task_id == "t1"
    with pytest.raises(ProtocolViolationError, match="did not declare"):
        core.result("tools/call", msgspec.Raw(raw))
    with pytest.raises(ProtocolViolationError, match="did not declare"):
        core.result("prompts/get", msgspec.Raw(raw), tasks=True)


def _status(status: str, **fields: Any) -> Any:
    data = {
        "taskId": "t1",
        "status": status,
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": 1000,
        **fields,
    }
    return msgspec.convert(data, x.GetTaskResult)  # type: ignore[arg-type]


def test_task_watch_steps() -> None:
    watch = TaskWatch("t1")
    assert watch.on_status(_status("working", pollIntervalMs=250)) == Wait(0.25)
    assert watch.on_status(_status("working")) == Wait(1.0)  # no hint: one second
    assert TaskWatch("t1", poll=2.0).on_status(_status("working", pollIntervalMs=250)) == Wait(2)
    request = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": FORM}}
    asking = _status("input_required", inputRequests={"k": request}, pollIntervalMs=10)
    step = watch.on_status(asking)
    assert isinstance(step, NeedInput) and list(step.requests) == ["k"]
    watch.answered(step.requests)
    assert watch.on_status(asking) == Wait(0.01)  # the same request again: not re-asked
    done = watch.on_status(_status("completed", result={"content": []}))
    assert isinstance(done, Done) and done.result == t.CallToolResult(content=[])
    with pytest.raises(TaskFailedError) as failed:
        watch.on_status(_status("failed", error={"code": -1, "message": "m"}))
    assert (failed.value.code, failed.value.message, failed.value.data) == (-1, "m", None)
    with pytest.raises(TaskCancelledError, match="'t1' was cancelled: bye"):
        watch.on_status(_status("cancelled", statusMessage="bye"))
    with pytest.raises(ProtocolViolationError, match="asked for task 't1'"):
        watch.on_status(_status("working", taskId="t2"))
    with pytest.raises(ProtocolViolationError, match="does not match the schema"):
        watch.on_status(_status("completed", result={"content": 5}))


# -- over Streamable HTTP --------------------------------------------------------------------------
def test_tasks_over_streamable_http() -> None:
    server, _ = build()
    asker = Asker("h")
    with serve(server.asgi_app()) as (url, _):

        async def main() -> None:
            async with Client.http(url, era="modern", on_elicitation=asker, timeout=10) as c:
                handle = await c.call_tool("ask", {"item": "web"}, task=True)
                assert isinstance(handle, ToolTask)
                assert text(await handle.result(timeout=5)) == "accept web {'v': 'h'}"
                assert asker.asked == ["Delete web?"]
                slow = await c.call_tool("slow", {"seconds": 30}, task=True)
                assert isinstance(slow, ToolTask)
                await slow.cancel()
                with pytest.raises(TaskCancelledError):
                    await slow.result(timeout=5)

        run(main())
