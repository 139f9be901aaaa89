"""A server whose handlers ask for input with `await ctx.elicit(...)` and friends; run as
a module it serves stdio (`python -m tests.server.await_server`).

Each tool counts how often its code before the first await ran, per `tag` argument,
and says so in its answer, so a test over stdio (another process) sees it too.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import msgspec

from mcpgen import Context, InputRequired, McpError, Server, elicit_form

RUNS: Counter[str] = Counter()
CANCELLED: list[str] = []
AGE = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}


class Name(msgspec.Struct):
    name: str


def build(**options: Any) -> Server:
    server = Server("await-input", **options)

    @server.tool
    async def two_questions(ctx: Context, tag: str) -> str:
        """Two awaits in a row."""
        RUNS[tag] += 1
        name = await ctx.elicit("Your name?", Name)
        age = await ctx.elicit("Your age?", AGE)
        assert name.content is not None and age.content is not None
        return f"{name.content['name']} is {age.content['age']}; runs={RUNS[tag]}"

    @server.tool
    async def all_kinds(ctx: Context, tag: str) -> str:
        """An elicitation, a completion and the roots."""
        RUNS[tag] += 1
        answer = await ctx.elicit("Your name?", Name)
        completion = await ctx.sample("Say hi", max_tokens=20, system_prompt="Be brief")
        roots = await ctx.list_roots()
        said = completion.content.text if hasattr(completion.content, "text") else "?"
        uris = ",".join(root.uri for root in roots.roots)
        return f"{answer.action} {answer.content}; model: {said}; roots: {uris}; runs={RUNS[tag]}"

    @server.tool
    async def confirm(ctx: Context) -> str:
        """The user may decline."""
        answer = await ctx.elicit("Proceed?", {"type": "object", "properties": {}})
        return f"action={answer.action} content={answer.content}"

    @server.tool
    async def sign_in(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in, please", "https://example.com/login")
        return f"url: {answer.action}"

    @server.tool
    async def careful(ctx: Context) -> str:
        """Catches a client that cannot elicit."""
        try:
            await ctx.elicit("Your name?", Name)
        except McpError as exc:
            return f"cannot ask ({exc.code})"
        return "asked"

    @server.tool
    async def careless(ctx: Context) -> str:
        await ctx.elicit("Your name?", Name)
        return "asked"

    @server.tool
    async def awaits_then_returns(ctx: Context) -> Any:
        """Mixes the styles: an await, then an InputRequired."""
        await ctx.elicit("Your name?", Name)
        return InputRequired({"more": elicit_form("More?", AGE)})

    @server.tool
    async def returns_then_awaits(ctx: Context) -> Any:
        """Mixes the styles: an InputRequired round, then an await."""
        if ctx.input("first") is None:
            return InputRequired({"first": elicit_form("First?", AGE)})
        await ctx.elicit("Your name?", Name)
        return "mixed"

    @server.tool(task="optional")
    async def in_a_task(ctx: Context, tag: str) -> str:
        RUNS[tag] += 1
        name = await ctx.elicit("Your name?", Name)
        age = await ctx.elicit("Your age?", AGE)
        assert name.content is not None and age.content is not None
        task = ctx.task_id is not None
        return f"task={task} {name.content['name']} {age.content['age']}; runs={RUNS[tag]}"

    @server.tool(task="optional", detach=True)
    async def staged(ctx: Context, tag: str) -> str:
        """Asks inside the request, detaches into a task, and asks again there."""
        RUNS[tag] += 1
        name = await ctx.elicit("Your name?", Name)
        await ctx.detach()
        age = await ctx.elicit("Your age?", AGE)
        assert name.content is not None and age.content is not None
        task = ctx.task_id is not None
        return f"task={task} {name.content['name']} {age.content['age']}; runs={RUNS[tag]}"

    @server.tool
    async def waits(ctx: Context, seconds: float = 30.0, tag: str = "") -> str:
        """Asks with a timeout (legacy sessions) and reports what became of it."""
        try:
            answer = await ctx.elicit("Anyone?", Name, timeout=seconds)
        except TimeoutError as exc:
            return f"timed out: {exc}"
        except asyncio.CancelledError:
            CANCELLED.append(tag)
            raise
        return answer.action

    @server.tool
    def cancelled() -> list[str]:
        """The tags of the `waits` calls cancelled while they waited."""
        return CANCELLED

    @server.prompt
    async def greeting(ctx: Context) -> str:
        answer = await ctx.elicit("Whom shall I greet?", Name)
        assert answer.content is not None
        return f"Hello, {answer.content['name']}!"

    return server


if __name__ == "__main__":
    build().run()
