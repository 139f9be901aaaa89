"""Every client callback runs guarded: one that raises (a wrong signature, a bug) is
logged on `mcpgen.client` with its traceback and the call it came with still ends, over
every link; a failing input callback is a failed answer the server hears about."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

import pytest

from mcpgen import (
    Client,
    ClientError,
    Context,
    InputRequired,
    McpError,
    Server,
    elicit_form,
    list_roots,
    sample,
)
from tests.conftest import REPO
from tests.transports.httpharness import serve

STDIO = [sys.executable, "-c", "from tests.client.test_callbacks import build; build().run()"]


def build() -> Server:
    server = Server("callbacks")

    @server.tool
    async def steps(ctx: Context) -> str:
        for i in (1, 2):
            ctx.progress(i, 2, f"step {i}")
            ctx.log("info", f"step {i}")
            await asyncio.sleep(0)
        return "done"

    def asking(key: str, request: Any) -> Any:
        def tool(ctx: Context) -> Any:
            answer = ctx.input(key)
            if answer is None:
                return InputRequired({key: request})
            return f"{key} answered: {getattr(answer, 'action', 'yes')}"

        return tool

    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    server.add_tool(asking("ask", elicit_form("Sure?", form)), name="ask")
    server.add_tool(asking("model", sample("Say hi", 10)), name="model")
    server.add_tool(asking("where", list_roots()), name="where")
    return server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def wrong_signature(progress: float) -> None:  # a progress callback takes three arguments
    raise AssertionError("never called with one argument")


async def raising(*args: Any) -> Any:
    raise ValueError("the callback's own bug")


def clients(link: str, era: str, **options: Any) -> Client:
    options |= {"era": era, "timeout": 10, "log_level": "debug"}
    if link == "memory":
        return Client.memory(build(), **options)
    return Client.stdio(STDIO, cwd=str(REPO), **options)


def tracebacks(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name == "mcpgen.client" and name in r.getMessage() and r.exc_info is not None
    ]


# Over stdio each case starts a server process: in the quick tier the elicitation test
# below keeps stdio, these run in memory.
LINKS = [
    ("memory", "modern"),
    ("memory", "legacy"),
    pytest.param("stdio", "modern", marks=pytest.mark.slow),
    pytest.param("stdio", "legacy", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("link", "era"), LINKS)
@pytest.mark.parametrize("callback", [wrong_signature, raising])
def test_a_raising_progress_callback(
    link: str, era: str, callback: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: over stdio the reader raised and the reply was lost (a timeout); in
    memory the client's error failed the server's tool."""

    async def main() -> None:
        async with clients(link, era) as c:
            result = await c.call_tool("steps", progress=callback)
            assert result.is_error is not True and result.content[0].text == "done"
            assert (await c.call_tool("steps")).content[0].text == "done"  # the link lives on
            await asyncio.sleep(0.05)

    run(main())
    assert len(tracebacks(caplog, "progress callback")) == 2


@pytest.mark.parametrize(("link", "era"), LINKS)
@pytest.mark.parametrize("callback", [lambda level: None, raising])
def test_a_raising_log_callback(
    link: str, era: str, callback: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        async with clients(link, era, on_log=callback) as c:
            await c.set_log_level("info")
            result = await c.call_tool("steps")
            assert result.is_error is not True and result.content[0].text == "done"
            await asyncio.sleep(0.05)

    run(main())
    assert len(tracebacks(caplog, "on_log callback")) == 2


def test_a_raising_progress_callback_over_http(caplog: pytest.LogCaptureFixture) -> None:
    with serve(build().asgi_app()) as (url, _):

        async def main() -> None:
            for era in ("modern", "legacy"):
                async with Client.http(url, era=era, timeout=10) as c:
                    result = await c.call_tool("steps", progress=wrong_signature)
                    assert result.content[0].text == "done"

        run(main())
    assert len(tracebacks(caplog, "progress callback")) == 4


@pytest.mark.parametrize("link", ["memory", "stdio"])
def test_a_raising_elicitation_callback_fails_the_elicitation(
    link: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Legacy: the server gets a JSON-RPC error naming the callback (no traceback) and
    its tool call fails with it. Modern: an input round cannot carry an error, so the
    elicitation is declined ("cancel"), as when there is no callback."""

    async def main() -> None:
        async with clients(link, "legacy", on_elicitation=raising) as c:
            with pytest.raises(McpError) as caught:
                await c.call_tool("ask")
            assert (
                "the client's on_elicitation callback failed (ValueError)" in caught.value.message
            )
            assert "Traceback" not in caught.value.message and "own bug" not in caught.value.message
        async with clients(link, "modern", on_elicitation=raising) as c:
            assert (await c.call_tool("ask")).content[0].text == "ask answered: cancel"

    run(main())
    assert len(tracebacks(caplog, "on_elicitation callback")) == 2


@pytest.mark.slow
@pytest.mark.parametrize("link", ["memory", "stdio"])
@pytest.mark.parametrize(("tool", "name"), [("model", "on_sampling"), ("where", "on_roots")])
def test_a_raising_sampling_or_roots_callback_ends_the_call(
    link: str, tool: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Legacy: a JSON-RPC error reply the server's call fails with; modern: the call
    raises a ClientError naming the callback (a missing callback does the same)."""
    callbacks = {name: raising}

    async def main() -> None:
        async with clients(link, "legacy", **callbacks) as c:
            with pytest.raises(McpError, match=f"the client's {name} callback failed"):
                await c.call_tool(tool)
            assert (await c.call_tool("steps")).content[0].text == "done"
        async with clients(link, "modern", **callbacks) as c:
            with pytest.raises(ClientError, match=f"the client's {name} callback failed") as err:
                await c.call_tool(tool)
            assert isinstance(err.value.__cause__, ValueError)
            assert (await c.call_tool("steps")).content[0].text == "done"

    run(main())
    assert len(tracebacks(caplog, f"{name} callback")) == 2
