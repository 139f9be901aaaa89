"""Sync handlers run in the server's worker threads, off the event loop (issue 11,
item 6): blocking tools run side by side over HTTP in both eras, `threaded=False` keeps
one on the loop (so it serializes), a Context used from a worker thread still reaches
the client, failures and input rounds are treated as before, a cancelled request does
not wait for its thread, and shutdown does not hang on a stuck handler."""

from __future__ import annotations

import asyncio
import json
import logging
import select
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, Context, InputRequired, McpError, Server, elicit_form
from mcpgen._server import Pending, deliver
from mcpgen_types import latest as t
from tests.server.harness import Client as Harness
from tests.server.harness import Recorder, request
from tests.transports.httpharness import serve

ERAS = ["modern", "legacy"]
GATE = threading.Event()  # what `stuck` waits for; set at the end of the tests using it


def _server(**options: Any) -> Server:
    server = Server("sync", **options)

    @server.tool
    def slow(seconds: float = 1.0) -> str:
        time.sleep(seconds)
        return threading.current_thread().name

    @server.tool(threaded=False)
    def inline(seconds: float = 0.5) -> str:
        time.sleep(seconds)
        return threading.current_thread().name

    @server.tool
    def report(ctx: Context) -> str:
        ctx.progress(1, 2, "half way")
        ctx.info("from a worker thread")
        ctx.progress(2, 2, "done")
        return threading.current_thread().name

    @server.tool
    def boom() -> str:
        raise RuntimeError("kaboom")

    @server.tool
    def refuse() -> str:
        raise McpError(-32042, "not today")

    @server.tool
    def confirm(ctx: Context, action: str) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            schema = {"type": "object", "properties": {"sure": {"type": "boolean"}}}
            return InputRequired({"ok": elicit_form(f"Really {action}?", schema)})
        return f"{action}:{answer.content['sure']}:{threading.current_thread().name}"

    @server.tool
    def stuck() -> str:
        GATE.wait(30)
        return "released"

    @server.resource("data://thread")
    def where() -> str:
        return threading.current_thread().name

    @server.resource("data://loop", threaded=False)
    def on_loop() -> str:
        return threading.current_thread().name

    @server.prompt
    def greet(name: str) -> str:
        return f"hello {name} from {threading.current_thread().name}"

    @server.completion(prompt="greet")
    def names(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [threading.current_thread().name]

    return server


def _text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


# -- concurrency over HTTP ----------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
def test_blocking_tools_run_side_by_side_over_http(era: str) -> None:
    """Three concurrent calls of a tool sleeping 1 s take about 1 s, not 3 s; the
    `threaded=False` tool still runs on the loop, one call after the other."""

    async def body(url: str) -> tuple[float, float, list[str], list[str]]:
        async with Client.http(url, era=era) as client:  # type: ignore[arg-type]
            await client.list_tools()
            start = time.monotonic()
            threaded = await asyncio.gather(*(client.call_tool("slow") for _ in range(3)))
            threaded_s = time.monotonic() - start
            start = time.monotonic()
            inline = await asyncio.gather(*(client.call_tool("inline") for _ in range(3)))
            inline_s = time.monotonic() - start
        return threaded_s, inline_s, [_text(r) for r in threaded], [_text(r) for r in inline]

    with serve(_server().asgi_app()) as (url, _):
        threaded_s, inline_s, workers, loops = asyncio.run(body(url))
    assert threaded_s < 2.5, f"three 1 s calls took {threaded_s:.2f} s"
    assert all(name.startswith("mcpgen-sync") for name in workers), workers
    assert inline_s >= 1.4, f"three 0.5 s inline calls took only {inline_s:.2f} s"
    assert not any(name.startswith("mcpgen-sync") for name in loops), loops


def test_sync_workers_bound_and_off() -> None:
    """`sync_workers=1`: one thread, so the calls queue; `sync_workers=0`: no thread."""

    async def timed(server: Server) -> tuple[float, set[str]]:
        async with Client.memory(server) as client:
            start = time.monotonic()
            replies = await asyncio.gather(
                *(client.call_tool("slow", {"seconds": 0.3}) for _ in range(3))
            )
            return time.monotonic() - start, {_text(r) for r in replies}

    elapsed, names = asyncio.run(timed(_server(sync_workers=1)))
    assert elapsed >= 0.85 and names == {"mcpgen-sync-0"}
    elapsed, names = asyncio.run(timed(_server(sync_workers=0)))
    assert elapsed >= 0.85 and names == {"MainThread"}
    with pytest.raises(Exception, match="sync_workers"):
        Server("bad", sync_workers=-1)


# -- Context from a worker thread ------------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_context_notifications_from_a_worker_thread_reach_the_client(era: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[tuple[str, object]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def body(url: str) -> str:
        client = Client.http(url, era=era, on_log=lambda lvl, data, _: logs.append((lvl, data)))  # type: ignore[arg-type]
        async with client:
            await client.set_log_level("info")
            return _text(await client.call_tool("report", progress=on_progress))

    with serve(_server().asgi_app()) as (url, _):
        name = asyncio.run(body(url))
    assert name.startswith("mcpgen-sync")
    assert progress == [(1, 2, "half way"), (2, 2, "done")]
    assert logs == [("info", "from a worker thread")]


# -- results, failures and input rounds ---------------------------------------------------------
@pytest.mark.parametrize("era", ERAS)
def test_failures_and_input_rounds_as_before(era: str, caplog: pytest.LogCaptureFixture) -> None:
    async def accept(params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"sure": True})

    async def body() -> tuple[t.CallToolResult, McpError, str, dict[str, str]]:
        async with Client.memory(_server(), era=era, on_elicitation=accept) as client:  # type: ignore[arg-type]
            failed = await client.call_tool("boom")
            with pytest.raises(McpError) as refused:
                await client.call_tool("refuse")
            confirmed = _text(await client.call_tool("confirm", {"action": "wipe"}))
            read = await client.read_resource("data://thread")
            loop = await client.read_resource("data://loop")
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            done = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "A")
            prompt_text = prompt.messages[0].content
            assert isinstance(prompt_text, t.TextContent)
            names = {
                "read": read.contents[0].text,  # type: ignore[union-attr]
                "loop": loop.contents[0].text,  # type: ignore[union-attr]
                "prompt": prompt_text.text,
                "complete": done.completion.values[0],
            }
            return failed, refused.value, confirmed, names

    with caplog.at_level(logging.ERROR, logger="mcpgen.server"):
        failed, refused, confirmed, names = asyncio.run(body())
    assert failed.is_error is True and "(ref " in _text(failed)  # masked by default
    logged = [r for r in caplog.records if r.getMessage().startswith("tool 'boom' failed (ref")]
    assert logged and logged[0].exc_info is not None and "kaboom" in str(logged[0].exc_info[1])
    assert refused.code == -32042 and "not today" in refused.message
    action, sure, thread = confirmed.split(":")
    assert (action, sure) == ("wipe", "True") and thread.startswith("mcpgen-sync")
    assert names["read"].startswith("mcpgen-sync") and names["loop"] == "MainThread"
    assert names["prompt"].startswith("hello Ada from mcpgen-sync")
    assert names["complete"].startswith("mcpgen-sync")


# -- cancellation and shutdown --------------------------------------------------------------------
class _Spawning(Recorder):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.append(task)
        return task


def test_a_cancelled_request_does_not_wait_for_its_thread() -> None:
    server = _server()
    harness = Harness(server, _Spawning())

    async def body() -> float:
        out = harness.send(request(1, "tools/call", {"name": "stuck"}))
        assert isinstance(out, Pending)  # a sync tool's work, handed to a thread
        deliver(out, harness.channel)
        (work,) = harness.channel.tasks
        await asyncio.sleep(0.1)
        start = time.monotonic()
        harness.send(
            json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            ).encode()
        )
        await asyncio.wait({work}, timeout=5)
        assert work.done() and not harness.channel.take("reply")  # no reply once cancelled
        return time.monotonic() - start

    try:
        assert asyncio.run(body()) < 1.0
    finally:
        GATE.set()
        GATE.clear()


def test_close_does_not_wait_for_a_stuck_handler_and_the_pool_serves_again() -> None:
    server = _server()

    async def body() -> str:
        async with Client.memory(server) as client:
            stuck = asyncio.ensure_future(client.call_tool("stuck"))
            await asyncio.sleep(0.2)
            start = time.monotonic()
            server.close()
            assert time.monotonic() - start < 0.5
            again = _text(await client.call_tool("slow", {"seconds": 0}))
            GATE.set()
            assert _text(await stuck) == "released"
            return again

    try:
        assert asyncio.run(body()).startswith("mcpgen-sync")
    finally:
        GATE.clear()


STDIO_SERVER = """
import threading
from mcpgen import Server

server = Server("stuck")

@server.tool
def stuck() -> str:
    threading.Event().wait()  # never returns
    return "never"

server.run()
"""


def test_stdio_exits_at_eof_with_a_handler_stuck_in_its_thread(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(textwrap.dedent(STDIO_SERVER))
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = {"name": "stuck", "arguments": {}, "_meta": meta}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta}}
    assert proc.stdin is not None and proc.stdout is not None
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, ping]
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    proc.stdin.flush()
    # The loop is free while the tool blocks: the next request is answered.
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    assert ready, "no answer while the tool blocks: the event loop is blocked"
    assert json.loads(proc.stdout.readline())["id"] == 2
    proc.stdin.close()
    try:
        assert proc.wait(timeout=10) == 0
    finally:
        proc.kill()
        proc.wait()
