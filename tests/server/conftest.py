from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpgen import Context, InputRequired, Server, elicit_form, elicit_url, list_roots, sample
from tests.server.harness import Client


def build_server(**options: Any) -> Server:
    server = Server("test-server", "1.2.3", instructions="Use the tools.", **options)

    @server.tool
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool
    def add(a: float, b: float) -> float:
        return a + b

    @server.tool
    def boom() -> str:
        raise RuntimeError("kaboom")

    @server.tool
    async def steps(ctx: Context, count: int = 3) -> str:
        for i in range(count):
            ctx.progress(i + 1, count, f"step {i + 1}")
            ctx.log("info", f"did step {i + 1}")
            ctx.debug("noise")
            await asyncio.sleep(0)
        return f"{count} steps"

    @server.tool
    async def wait(ctx: Context) -> str:
        await asyncio.sleep(30)
        return "never"

    @server.tool
    def confirm(ctx: Context, action: str) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            form = elicit_form(
                f"Really {action}?", {"type": "object", "properties": {"sure": {"type": "boolean"}}}
            )
            return InputRequired({"ok": form}, state={"action": action})
        return f"{answer.action}:{ctx.state['action']}:{answer.content}"

    @server.tool
    async def research(ctx: Context, topic: str) -> Any:
        if not ctx.input_responses:
            return InputRequired(
                {
                    "roots": list_roots(),
                    "summary": sample(f"Summarise {topic}", 100),
                    "login": elicit_url("Sign in", "https://example.com/login"),
                },
                state=1,
            )
        roots, summary, login = ctx.input("roots"), ctx.input("summary"), ctx.input("login")
        return f"{len(roots.roots)} roots; model said {summary.content.text}; login {login.action}"

    @server.tool
    def trigger_change() -> str:
        server.notify_tools_changed()
        return "changed"

    @server.resource("mem://readme", mime_type="text/plain", description="A readme")
    def readme() -> str:
        return "read me"

    server.add_resource("mem://logo", b"\x89PNG", mime_type="image/png")

    @server.resource_template("users://{user_id}/profile", mime_type="application/json")
    def profile(user_id: str) -> str:
        return json.dumps({"id": user_id}, separators=(", ", ": "))

    @server.resource_template("files:///{+path}")
    def files(path: str) -> str:
        return f"file {path}"

    @server.prompt
    def greet(name: str, style: str = "plain") -> str:
        """Greet someone."""
        return f"Hello {name} ({style})"

    @server.completion(prompt="greet")
    def complete_greet(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [n for n in ("alice", "albert", "bob") if n.startswith(value)]

    return server


@pytest.fixture
def server() -> Server:
    return build_server()


@pytest.fixture
def client(server: Server) -> Client:
    return Client(server)
