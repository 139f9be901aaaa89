"""The middleware chain (`Server(middleware=[...])`, `add_middleware`): order, what a
hook sees and may change, errors, every per-method hook, notifications, and that MRTR
rounds, tasks, await-style input and the proxy pass the chain once per step."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from mcpgen import (
    CallNext,
    Client,
    Context,
    InputRequired,
    McpError,
    Middleware,
    MiddlewareContext,
    NotificationContext,
    Proxy,
    Server,
    ToolError,
    TransportTimeoutError,
    elicit_form,
)
from mcpgen._server import Pending
from mcpgen._server._methods import METHODS
from mcpgen_types import latest as t
from tests.proxy.common import UPSTREAM
from tests.server.harness import Recorder, notification, request

ERAS = ["modern", "legacy"]
TASKS = "io.modelcontextprotocol/tasks"
FORM = {"type": "object", "properties": {"v": {"type": "string"}}}


class Trace(Middleware):
    """Records each hook it passes through, in `log`."""

    def __init__(self, name: str, log: list[tuple[str, ...]]) -> None:
        self.name, self.log = name, log

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        self.log.append((self.name, "request", ctx.method, ctx.step))
        result = await call_next(ctx)
        self.log.append((self.name, "done", ctx.method, type(result).__name__))
        return result

    async def on_call_tool(
        self, ctx: MiddlewareContext[t.CallToolRequestParams], call_next: CallNext
    ) -> Any:
        self.log.append((self.name, "call_tool", ctx.params.name, ctx.era))
        return await call_next(ctx)


def features(server: Server) -> Server:
    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    @server.resource("mem://a", name="a")
    def read_a() -> str:
        return "A"

    @server.resource_template("mem://items/{item}", name="items")
    def item(item: str) -> str:
        return f"item {item}"

    @server.prompt
    def greet(name: str) -> str:
        return f"hello {name}"

    @server.completion(prompt="greet")
    def names(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return ["ada", "alan"]

    return server


def calls(log: list[tuple[str, ...]], what: str) -> list[tuple[str, ...]]:
    return [entry for entry in log if entry[1] == what]


@pytest.mark.parametrize("era", ERAS)
def test_the_first_middleware_is_the_outermost_and_on_request_wraps_the_method_hook(
    era: str,
) -> None:
    log: list[tuple[str, ...]] = []
    server = features(Server("mw", middleware=[Trace("a", log), Trace("b", log)]))

    async def main() -> None:
        async with Client.memory(server, era=era, cache=False) as client:
            log.clear()  # the era probe, if any
            result = await client.call_tool("shout", {"text": "hi"})
            assert result.content == [t.TextContent(text="HI")]

    asyncio.run(main())
    assert log == [
        ("a", "request", "tools/call", "request"),
        ("a", "call_tool", "shout", era),
        ("b", "request", "tools/call", "request"),
        ("b", "call_tool", "shout", era),
        ("b", "done", "tools/call", "CallToolResult"),
        ("a", "done", "tools/call", "CallToolResult"),
    ]


def test_add_middleware_appends_inside_and_takes_effect_on_a_running_server() -> None:
    log: list[tuple[str, ...]] = []
    server = features(Server("mw", middleware=[Trace("a", log)]))

    async def main() -> None:
        async with Client.memory(server, era="modern", cache=False) as client:
            await client.call_tool("echo", {"text": "x"})
            assert [e[0] for e in calls(log, "call_tool")] == ["a"]
            server.add_middleware(Trace("b", log))
            log.clear()
            await client.call_tool("echo", {"text": "x"})
            assert [e[0] for e in calls(log, "call_tool")] == ["a", "b"]

    asyncio.run(main())


def test_no_middleware_leaves_the_method_table_untouched() -> None:
    server = features(Server("plain"))
    assert server.core.methods is METHODS
    assert server.core.chains is None
    assert server.core.tasks.step is None
    with pytest.raises(Exception, match="not a Middleware"):
        server.add_middleware(object())  # type: ignore[arg-type]


class Hooks(Middleware):
    """Overrides every per-method hook and records which ran, with the params type."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def _note(self, hook: str, ctx: MiddlewareContext[Any]) -> None:
        self.seen.append((hook, ctx.method, type(ctx.params).__name__))

    async def on_list_tools(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_list_tools", ctx)
        return await call_next(ctx)

    async def on_list_resources(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_list_resources", ctx)
        return await call_next(ctx)

    async def on_list_resource_templates(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_list_resource_templates", ctx)
        return await call_next(ctx)

    async def on_list_prompts(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_list_prompts", ctx)
        return await call_next(ctx)

    async def on_read_resource(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_read_resource", ctx)
        return await call_next(ctx)

    async def on_get_prompt(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_get_prompt", ctx)
        return await call_next(ctx)

    async def on_complete(self, ctx: Any, call_next: CallNext) -> Any:
        self._note("on_complete", ctx)
        return await call_next(ctx)


@pytest.mark.parametrize("era", ERAS)
def test_each_method_reaches_its_own_hook_with_its_generated_params(era: str) -> None:
    hooks = Hooks()
    server = features(Server("mw", middleware=[hooks]))

    async def main() -> None:
        async with Client.memory(server, era=era, cache=False) as client:
            await client.list_tools()
            await client.list_resources()
            await client.list_resource_templates()
            await client.list_prompts()
            await client.read_resource("mem://items/7")
            await client.get_prompt("greet", {"name": "ada"})
            await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "a")

    asyncio.run(main())
    hooks_seen = [(hook, method) for hook, method, _ in hooks.seen]
    assert hooks_seen == [
        ("on_list_tools", "tools/list"),
        ("on_list_resources", "resources/list"),
        ("on_list_resource_templates", "resources/templates/list"),
        ("on_list_prompts", "prompts/list"),
        ("on_read_resource", "resources/read"),
        ("on_get_prompt", "prompts/get"),
        ("on_complete", "completion/complete"),
    ]
    params_types = {method: kind for _, method, kind in hooks.seen}
    assert params_types["resources/read"].startswith("ReadResourceRequestParams")
    assert params_types["prompts/get"].startswith("GetPromptRequestParams")
    assert params_types["completion/complete"].startswith("CompleteRequestParams")


class Rewrite(Middleware):
    """Changes params on the way in and results on the way out."""

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        if ctx.params.name == "echo":
            ctx.params.arguments = {"text": ctx.params.arguments["text"] + "!"}
        result = await call_next(ctx)
        result.content.append(t.TextContent(text="(checked)"))
        return result

    async def on_list_tools(self, ctx: Any, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        result.tools = [tool for tool in result.tools if tool.name != "shout"]
        return result

    async def on_read_resource(self, ctx: Any, call_next: CallNext) -> Any:
        if ctx.params.uri == "mem://cached":  # answered here: no handler runs
            return t.ReadResourceResult(
                contents=[t.TextResourceContents(uri="mem://cached", text="from middleware")],
                ttl_ms=0,
                cache_scope="private",
            )
        return await call_next(ctx)


@pytest.mark.parametrize("era", ERAS)
def test_a_middleware_changes_params_and_results_and_answers_itself(era: str) -> None:
    server = features(Server("mw", middleware=[Rewrite()]))

    async def main() -> None:
        async with Client.memory(server, era=era, cache=False) as client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert [b.text for b in result.content] == ["hi!", "(checked)"]  # type: ignore[union-attr]
            assert [tool.name for tool in await client.list_tools()] == ["echo"]
            read = await client.read_resource("mem://cached")
            assert read.contents[0].text == "from middleware"  # type: ignore[union-attr]

    asyncio.run(main())


class Refuse(Middleware):
    def __init__(self, how: str) -> None:
        self.how = how

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        if self.how == "mcp":
            raise McpError(-32042, "not today", {"why": "policy"})
        if self.how == "tool":
            raise ToolError(ctx.params.name, t.CallToolResult(content=[], is_error=True))
        raise RuntimeError("a bug in a middleware")


@pytest.mark.parametrize("era", ERAS)
def test_errors_raised_by_a_middleware(era: str) -> None:
    async def main() -> None:
        server = features(Server("mw", middleware=[Refuse("mcp")]))
        async with Client.memory(server, era=era) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("echo", {"text": "x"})
            assert (caught.value.code, caught.value.data) == (-32042, {"why": "policy"})
        server = features(Server("mw", middleware=[Refuse("tool")]))
        async with Client.memory(server, era=era) as client:
            result = await client.call_tool("echo", {"text": "x"})
            assert result.is_error is True
        server = features(Server("mw", mask_errors=True, middleware=[Refuse("bug")]))
        async with Client.memory(server, era=era) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("echo", {"text": "x"})
            assert caught.value.code == -32603  # masked: a reference, the detail logged
            assert re.fullmatch(r"internal error \(ref [0-9a-f]{8}\)", caught.value.message)

    asyncio.run(main())


class Notes(Middleware):
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.drop = False

    async def on_notification(self, ctx: NotificationContext, call_next: Any) -> None:
        self.seen.append((ctx.method, ctx.era))
        if not self.drop:
            await call_next(ctx)


def test_notifications_pass_the_notification_hook_which_may_drop_them() -> None:
    notes = Notes()
    server = features(Server("mw", middleware=[notes]))
    session = server.session()
    channel = Recorder()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}}
    init["clientInfo"] = {"name": "t", "version": "1"}

    async def main() -> None:
        assert isinstance(
            session.receive(request(1, "initialize", init, modern=False), channel), bytes
        )
        for drop in (True, False):
            notes.drop = drop
            outcome = session.receive(notification("notifications/initialized"), channel)
            assert isinstance(outcome, Pending)  # the chain runs as work of its own
            assert await outcome.coro is None
            assert session.legacy is not None
            assert session.legacy.initialized is not drop

    asyncio.run(main())
    assert notes.seen == [("notifications/initialized", "legacy")] * 2


# -- once per logical step ------------------------------------------------------------------
class Count(Middleware):
    def __init__(self) -> None:
        self.steps: list[tuple[str, str, int]] = []

    async def on_call_tool(self, ctx: Any, call_next: CallNext) -> Any:
        self.steps.append((ctx.params.name, ctx.step, ctx.round))
        return await call_next(ctx)


def stepped(count: Count) -> Server:
    server = Server("steps", middleware=[count], task_poll_seconds=0.05)  # quick task polls

    @server.tool
    def asks(ctx: Context) -> Any:  # the InputRequired style: two rounds
        if "v" in ctx.input_responses:
            return f"got {ctx.input_responses['v'].content['v']}"
        return InputRequired({"v": elicit_form("v?", FORM)})

    @server.tool
    async def awaits(ctx: Context) -> str:  # the await style
        answer = await ctx.elicit("v?", FORM)
        return f"got {answer.content['v']}"  # type: ignore[index]

    @server.tool(task="optional")
    async def job(ctx: Context) -> str:
        answer = await ctx.elicit("v?", FORM)
        return f"job {answer.content['v']}"  # type: ignore[index]

    return server


def answer(params: t.ElicitRequestParams) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"v": "yes"})


@pytest.mark.parametrize(
    ("era", "tool", "expected"),
    [
        # A modern client's rounds are requests of their own: the chain runs per round.
        ("modern", "asks", [("asks", "request", 0), ("asks", "request", 0)]),
        ("modern", "awaits", [("awaits", "request", 0), ("awaits", "request", 0)]),
        # A legacy session's InputRequired rounds run the handler again: one step each.
        ("legacy", "asks", [("asks", "request", 0), ("asks", "request", 1)]),
        # Awaited input in a legacy session: the handler runs once, waiting for the answer.
        ("legacy", "awaits", [("awaits", "request", 0)]),
    ],
)
def test_input_rounds_pass_the_chain_once_per_round(
    era: str, tool: str, expected: list[tuple[str, str, int]]
) -> None:
    count = Count()

    async def main() -> None:
        async with Client.memory(stepped(count), era=era, on_elicitation=answer) as client:
            result = await client.call_tool(tool)
            assert result.content[0].text == "got yes"  # type: ignore[union-attr]

    asyncio.run(main())
    assert count.steps == expected


def test_a_task_passes_the_chain_at_creation_and_once_per_run_of_its_work() -> None:
    count = Count()
    log: list[tuple[str, ...]] = []
    server = stepped(count)
    server.add_middleware(Trace("t", log))

    async def main() -> None:
        async with Client.memory(server, era="modern", on_elicitation=answer) as client:
            handle = await client.call_tool("job", task=True)
            done = await handle.result(timeout=10)  # type: ignore[union-attr]
            assert done.content[0].text == "job yes"  # type: ignore[union-attr]

    asyncio.run(main())
    # Created (the request), run until its input round, run again with the answer.
    assert count.steps == [("job", "request", 0), ("job", "task", 0), ("job", "task", 0)]
    done = [e[3] for e in log if e[1:3] == ("done", "tools/call")]
    assert done == ["CreateTaskResult", "InputRequired", "CallToolResult"]
    # tasks/get, tasks/update pass on_request like any request.
    assert {e[2] for e in log if e[1] == "request"} >= {"tasks/get", "tasks/update"}


@pytest.mark.parametrize("era", ERAS)
def test_a_proxy_with_middleware_passes_each_request_once(era: str) -> None:
    count = Count()
    proxy = Proxy(UPSTREAM, middleware=[count])

    async def main() -> None:
        async with Client.memory(proxy, era=era, cache=False) as client:  # type: ignore[arg-type]
            result = await client.call_tool("test_simple_text")
            assert result.content
            await client.call_tool("test_simple_text")

    asyncio.run(main())
    assert count.steps == [("test_simple_text", "request", 0)] * 2


class Quick(Middleware):
    inline = True

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        return await call_next(ctx)


class Slow(Quick):
    inline = False


@pytest.mark.parametrize(("middleware", "answered_at_once"), [(Quick, True), (Slow, False)])
def test_an_inline_chain_answers_a_sync_handler_without_a_task(
    middleware: type[Middleware], answered_at_once: bool
) -> None:
    server = features(Server("mw", sync_workers=0, middleware=[middleware()]))
    outcome = server.session().receive(
        request(1, "tools/call", {"name": "echo", "arguments": {"text": "x"}}), Recorder()
    )
    assert isinstance(outcome, bytes) is answered_at_once
    if answered_at_once:
        assert b'"text":"x"' in outcome  # type: ignore[operator]
    else:
        assert isinstance(outcome, Pending)
        assert b'"x"' in (asyncio.run(outcome.coro) or b"")  # type: ignore[arg-type]


class Look(Middleware):
    inline = True

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        self.seen = {
            "headers": ctx.headers,
            "principal": ctx.principal,
            "peer": ctx.peer,
            "era": ctx.era,
            "version": ctx.version,
            "request_id": ctx.request_id,
            "client": None if ctx.client_info is None else ctx.client_info.name,
            "scopes": ctx.scopes,
        }
        return await call_next(ctx)


def test_the_context_carries_what_the_transport_knows() -> None:
    look = Look()
    server = features(Server("mw", sync_workers=0, middleware=[look]))
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"}
    channel = Recorder(headers=headers, principal="ada")
    channel.peer = "10.0.0.7"
    line = request(7, "tools/call", {"name": "echo", "arguments": {"text": "x"}})
    outcome = server.session().receive(line, channel)
    assert isinstance(outcome, bytes) and b'"text":"x"' in outcome
    assert look.seen == {
        "headers": headers,
        "principal": "ada",
        "peer": "10.0.0.7",
        "era": "modern",
        "version": "2026-07-28",
        "request_id": 7,
        "client": "test",
        "scopes": frozenset(),
    }


@pytest.mark.parametrize("era", ERAS)
def test_a_cancelled_request_cancels_the_handler_inside_the_chain(era: str) -> None:
    cancelled: list[str] = []
    server = Server("mw", middleware=[Trace("t", [])])

    @server.tool
    async def slow() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append("handler")
            raise
        return "late"

    async def main() -> None:
        async with Client.memory(server, era=era, timeout=0.3) as client:  # type: ignore[arg-type]
            with pytest.raises(TransportTimeoutError):
                await client.call_tool("slow")
            for _ in range(50):  # the cancellation notification passes the chain too
                if cancelled:
                    break
                await asyncio.sleep(0.05)

    asyncio.run(main())
    assert cancelled == ["handler"]
