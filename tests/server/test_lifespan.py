"""`Server(lifespan=fn)` (issue 11, item 7): entered once before serving and exited
once after it, on stdio, under uvicorn (ASGI lifespan), mounted in Starlette and
FastAPI (the host's lifespan, or the first request when nobody entered it) and over
`Client.memory`; its value is `ctx.lifespan` in tools, resources, prompts and tasks, in
both eras; a failure to enter stops the start with the error. Also: `server.run(
transport="http")` prints the URLs it serves (issue 11, item 11 in part)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpgen import Client, Context, Server
from mcpgen.transports import McpAsgiApp, MemoryConnection
from mcpgen_types import latest as t
from tests.server.harness import request
from tests.transports.httpharness import modern_headers, running, serve

ERAS = ["modern", "legacy"]
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


class Resources:
    """What a lifespan hands its handlers, and a record of its entries and exits."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.db = "connected"


def _server(resources: Resources, fail: bool = False) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Resources]:
        assert server.info.name == "life"
        resources.events.append("enter")
        await asyncio.sleep(0)
        if fail:
            raise RuntimeError("no database")
        try:
            yield resources
        finally:
            resources.events.append("exit")

    server = Server("life", lifespan=lifespan)

    @server.tool
    def sync_tool(ctx: Context) -> str:
        return f"sync:{ctx.lifespan.db}"

    @server.tool
    async def async_tool(ctx: Context) -> str:
        return f"async:{ctx.lifespan.db}"

    @server.tool(task="optional")
    async def in_task(ctx: Context) -> str:
        return f"task:{ctx.task_id is not None}:{ctx.lifespan.db}"

    @server.resource("life://db")
    def db(ctx: Context) -> str:
        return f"resource:{ctx.lifespan.db}"

    @server.prompt
    async def status(ctx: Context) -> str:
        return f"prompt:{ctx.lifespan.db}"

    return server


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def _use(client: Client) -> list[str]:
    """Every kind of handler reads `ctx.lifespan`."""
    seen = [_text(await client.call_tool(name)) for name in ("sync_tool", "async_tool")]
    read = await client.read_resource("life://db")
    seen.append(read.contents[0].text)  # type: ignore[union-attr]
    prompt = (await client.get_prompt("status")).messages[0].content
    assert isinstance(prompt, t.TextContent)
    seen.append(prompt.text)
    return seen


EXPECTED = ["sync:connected", "async:connected", "resource:connected", "prompt:connected"]


# -- memory ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_memory_client_enters_and_exits_it_once(era: str) -> None:
    resources = Resources()
    server = _server(resources)

    async def body() -> list[str]:
        async with Client.memory(server, era=era) as client:  # type: ignore[arg-type]
            seen = await _use(client)
            async with Client.memory(server, era=era) as other:  # type: ignore[arg-type]
                seen.append(_text(await other.call_tool("sync_tool")))
            assert resources.events == ["enter"]  # shared: still held by the first client
        return seen

    assert asyncio.run(body()) == [*EXPECTED, "sync:connected"]
    assert resources.events == ["enter", "exit"]


def test_a_task_sees_it() -> None:
    resources = Resources()

    async def body() -> str:
        async with Client.memory(_server(resources), era="modern") as client:
            reply = await client.call_tool("in_task", task=True)
            assert not isinstance(reply, t.CallToolResult), "expected a task"
            return _text(await reply.result(timeout=10))

    assert asyncio.run(body()) == "task:True:connected"


def test_memory_messages_sent_while_it_starts_wait_for_it() -> None:
    """Two requests sent at once on a fresh memory connection: neither reaches its handler
    before the (slow) lifespan has been entered, and it is entered once."""
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def slow(server: Server) -> AsyncIterator[str]:
        events.append("entering")
        await asyncio.sleep(0.05)
        events.append("entered")
        yield "ready"
        events.append("exit")

    server = Server("slow-start", "1.0", lifespan=slow)

    @server.tool
    async def probe(ctx: Context) -> str:
        events.append(f"handler:{ctx.lifespan}")
        return "ok"

    async def body() -> list[dict[str, Any]]:
        connection = MemoryConnection(server)
        call = {"name": "probe", "arguments": {}}
        await asyncio.gather(
            connection.send(request(1, "tools/call", call)),
            connection.send(request(2, "tools/call", call)),
        )
        replies = [json.loads(await connection.receive()) for _ in range(2)]
        await connection.close()
        return replies

    replies = asyncio.run(body())
    assert sorted(r["id"] for r in replies) == [1, 2]
    assert all(r["result"]["content"][0]["text"] == "ok" for r in replies)
    assert events == ["entering", "entered", "handler:ready", "handler:ready", "exit"]


def test_memory_start_failure_fails_the_connection() -> None:
    resources = Resources()

    async def body() -> None:
        async with Client.memory(_server(resources, fail=True)) as client:
            await client.call_tool("sync_tool")

    with pytest.raises(Exception, match="lifespan failed to start: RuntimeError: no database"):
        asyncio.run(body())
    assert resources.events == ["enter"]


# -- ASGI lifespan under uvicorn -----------------------------------------------------------
def _call(url: str, name: str = "sync_tool") -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    return httpx.post(url, content=json.dumps(body), headers=modern_headers("tools/call", name))


def test_uvicorn_enters_it_at_startup_and_exits_it_at_shutdown() -> None:
    resources = Resources()
    app = _server(resources).asgi_app()
    with serve(app) as (url, _):
        assert resources.events == ["enter"]  # before any request
        assert _call(url).json()["result"]["content"][0]["text"] == "sync:connected"

        async def legacy() -> list[str]:
            async with Client.http(url, era="legacy") as client:
                return await _use(client)

        assert asyncio.run(legacy()) == EXPECTED
    assert resources.events == ["enter", "exit"]


def test_a_startup_failure_is_reported_and_uvicorn_does_not_start() -> None:
    resources = Resources()
    app = _server(resources, fail=True).asgi_app()
    messages: list[dict[str, Any]] = []
    incoming = iter([{"type": "lifespan.startup"}])

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    asyncio.run(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    assert [m["type"] for m in messages] == ["lifespan.startup.failed"]
    assert "no database" in messages[0]["message"]
    server = uvicorn.Server(
        uvicorn.Config(app, "127.0.0.1", 0, lifespan="on", log_level="critical")
    )
    with pytest.raises(SystemExit):  # uvicorn's own exit on a failed startup
        asyncio.run(server.serve())
    assert not server.started


# -- mounted in a host ---------------------------------------------------------------------------
@contextlib.contextmanager
def _hosted(host: Any) -> Iterator[str]:
    config = uvicorn.Config(host, "127.0.0.1", 0, log_level="warning", loop="asyncio")
    with running(uvicorn.Server(config)) as base:
        yield base


@pytest.mark.parametrize("kind", ["starlette", "fastapi"])
def test_a_host_lifespan_enters_and_exits_it(kind: str) -> None:
    resources = Resources()
    mcp = _server(resources).asgi_app()
    host: Any
    if kind == "fastapi":
        host = FastAPI(lifespan=mcp.lifespan)
        host.mount("/weather", mcp)
    else:
        host = Starlette(routes=[Mount("/weather", app=mcp)], lifespan=mcp.lifespan)
    with _hosted(host) as base:
        assert resources.events == ["enter"]
        reply = _call(f"{base}/weather/mcp", "async_tool").json()
        assert reply["result"]["content"][0]["text"] == "async:connected"
    assert resources.events == ["enter", "exit"]
    assert mcp.stopping  # the app's own shutdown ran first


@pytest.mark.parametrize("kind", ["starlette", "fastapi"])
def test_mounted_without_a_host_lifespan_it_is_entered_at_the_first_request(kind: str) -> None:
    resources = Resources()
    mcp = _server(resources).asgi_app()
    host: Any = FastAPI() if kind == "fastapi" else Starlette(routes=[Mount("/weather", app=mcp)])
    if kind == "fastapi":
        host.mount("/weather", mcp)
    with _hosted(host) as base:
        assert resources.events == []  # the host sent the app no lifespan event
        replies = [_call(f"{base}/weather/mcp", name).json() for name in ("sync_tool", "in_task")]
        assert replies[0]["result"]["content"][0]["text"] == "sync:connected"
        assert resources.events == ["enter"]  # once, not per request
        asyncio.run(mcp.shutdown())  # what a host's own shutdown may do
    assert resources.events == ["enter", "exit"]


def test_mounted_start_failure_answers_500_with_the_message() -> None:
    mcp = _server(Resources(), fail=True).asgi_app()
    with _hosted(Starlette(routes=[Mount("/weather", app=mcp)])) as base:
        r = _call(f"{base}/weather/mcp")
    assert r.status_code == 500 and "no database" in r.text


def test_the_app_without_a_lifespan_is_unchanged() -> None:
    app: McpAsgiApp = Server("plain").asgi_app()
    assert app.life.lifespan is None


# -- stdio and server.run --------------------------------------------------------------------------
SCRIPT = """
import contextlib, sys
from mcpgen import Context, Server

@contextlib.asynccontextmanager
async def lifespan(server):
    print("enter", file=sys.stderr, flush=True)
    if "--fail" in sys.argv:
        raise RuntimeError("no database")
    yield {"db": "connected"}
    print("exit", file=sys.stderr, flush=True)

server = Server("life", lifespan=lifespan)

@server.tool
def db(ctx: Context) -> str:
    return ctx.lifespan["db"]

if "--http" in sys.argv:
    server.run(transport="http", port=0)
else:
    server.run()
"""
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "life.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


def test_stdio_enters_it_before_serving_and_exits_it_at_eof(tmp_path: Path) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "db", "arguments": {}, "_meta": META}
    done = subprocess.run(
        [sys.executable, str(_script(tmp_path))],
        input=json.dumps(call).encode() + b"\n",
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == "connected"
    assert done.stderr.decode().split() == ["enter", "exit"]


def test_stdio_start_failure_exits_with_the_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(_script(tmp_path)), "--fail"],
        input=b"",
        capture_output=True,
        timeout=30,
        check=False,
    )
    err = done.stderr.decode()
    assert done.returncode == 1 and done.stdout == b""
    assert "lifespan failed to start: RuntimeError: no database" in err


def test_run_http_prints_its_urls_and_fails_with_the_lifespan(tmp_path: Path) -> None:
    script = _script(tmp_path)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), "--http"], stderr=subprocess.PIPE, env=env
    )
    try:
        assert proc.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 30
        while not any("HTTP+SSE" in line for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, lines
            lines.append(proc.stderr.readline().decode())
        found = re.search(r"at (http://127\.0\.0\.1:(\d+)/mcp)\n", "".join(lines))
        assert found is not None and found.group(2) != "0", lines
        assert f"http://127.0.0.1:{found.group(2)}/sse" in "".join(lines)
        reply = _call(found.group(1), "db").json()
        assert reply["result"]["content"][0]["text"] == "connected"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    failed = subprocess.run(
        [sys.executable, str(script), "--http", "--fail"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert failed.returncode == 1
    assert "lifespan failed to start: RuntimeError: no database" in failed.stderr.decode()
    assert b"serving MCP" not in failed.stderr  # nothing was served
