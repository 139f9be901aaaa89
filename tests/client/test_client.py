"""mcpgen.Client against our server (in memory, stdio) and against fake legacy servers."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen import CacheHint, Client, McpError, Server
from mcpgen._client import Verdict, shared_verdicts
from mcpgen.transports._links import StdioLink
from mcpgen_types import latest as t
from tests.server.conftest import build_server

FAKE = [sys.executable, str(Path(__file__).with_name("fake_legacy_server.py"))]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def accept(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"sure": True})


def test_auto_picks_modern_and_mrtr_is_fulfilled_by_callbacks() -> None:
    async def main() -> None:
        async with Client.memory(build_server(), on_elicitation=accept) as c:
            assert (c.era, c.protocol_version) == ("modern", "2026-07-28")
            assert c.server_info == {"name": "test-server", "version": "1.2.3"}
            result = await c.call_tool("confirm", {"action": "ship"})
            assert result.content[0].text == "accept:ship:{'sure': True}"

    run(main())


def test_without_a_callback_elicitation_is_refused_cleanly() -> None:
    async def main() -> None:
        async with Client.memory(build_server()) as c:  # no elicitation capability declared
            with pytest.raises(McpError) as caught:
                await c.call_tool("confirm", {"action": "x"})
            assert caught.value.code == -32021

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_features_in_both_eras(era: str) -> None:
    async def main() -> None:
        seen: list[Any] = []
        async with Client.memory(
            build_server(), era=era, on_elicitation=accept, on_log=lambda *a: seen.append(a)
        ) as c:
            assert c.era == era
            assert [tool.name for tool in await c.list_tools()][:2] == ["echo", "add"]
            added = await c.call_tool("add", {"a": 1, "b": 2})
            assert added.content[0].text == "3.0"
            # A number: itself from 2026-07-28 on, {"result": 3} before, which the client unwraps.
            assert added.structured_content == 3
            assert (await c.read_resource("mem://readme")).contents[0].text == "read me"
            templates = await c.list_resource_templates()
            assert templates[0].uri_template == "users://{user_id}/profile"
            prompt = await c.get_prompt("greet", {"name": "Ada"})
            assert prompt.messages[0].content.text == "Hello Ada (plain)"
            done = await c.complete({"type": "ref/prompt", "name": "greet"}, "name", "al")
            assert done.completion.values == ["alice", "albert"]
            progress: list[Any] = []
            await c.set_log_level("info")
            await c.call_tool("steps", {"count": 2}, progress=lambda *a: progress.append(a))
            await asyncio.sleep(0.05)
            assert [p[0] for p in progress] == [1, 2]
            assert [s[1] for s in seen if s[0] == "info"] == ["did step 1", "did step 2"]
            assert (
                (await c.call_tool("confirm", {"action": "x"}))
                .content[0]
                .text.startswith("accept:x")
            )
            with pytest.raises(McpError) as caught:
                await c.read_resource("nope://x")
            assert caught.value.code == (-32602 if era == "modern" else -32002)

    run(main())


def test_pagination_collects_every_page() -> None:
    srv = Server("p", page_size=3)
    for i in range(8):
        srv.add_tool(lambda: "x", name=f"t{i}")

    async def main() -> None:
        async with Client.memory(srv) as c:
            assert [x.name for x in await c.list_tools()] == [f"t{i}" for i in range(8)]
            assert len(await c.list_tools(all_pages=False)) == 3

    run(main())


def test_cache_honours_ttl_and_list_changed() -> None:
    srv = Server("c", cache={"tools/list": CacheHint(60_000, "public")})
    calls = {"n": 0}
    srv.add_tool(lambda: "x", name="first")

    async def main() -> None:
        async with Client.memory(srv) as c:
            original = c.request

            async def counting(method: str, params: Any = None, **kw: Any) -> Any:
                calls["n"] += method == "tools/list"
                return await original(method, params, **kw)

            c.request = counting  # type: ignore[method-assign]
            await c.list_tools()
            await c.list_tools()
            assert calls["n"] == 1  # fresh for 60 s: served from the cache
            listening = asyncio.ensure_future(anext(aiter(c.listen(tools=True))))
            await asyncio.sleep(0.05)
            srv.add_tool(lambda: "y", name="second")  # list_changed invalidates
            await asyncio.wait_for(listening, 5)
            assert [x.name for x in await c.list_tools()] == ["first", "second"]
            assert calls["n"] == 2
            await c.list_tools(refresh=True)
            assert calls["n"] == 3

    run(main())


def test_listen_and_its_end() -> None:
    server = build_server()

    async def main() -> None:
        async with Client.memory(server) as c:
            got: list[Any] = []

            async def consume() -> None:
                async for note in c.listen(tools=True, resource_uris=["mem://readme"]):
                    got.append(note)
                    if len(got) == 2:
                        break

            task = asyncio.ensure_future(consume())
            await asyncio.sleep(0.05)
            await c.call_tool("trigger_change")
            server.notify_resource_updated("mem://readme")
            await asyncio.wait_for(task, 5)
            assert [type(n).__name__ for n in got] == [
                "ToolListChangedNotification",
                "ResourceUpdatedNotification",
            ]
            await asyncio.sleep(0.05)
            assert server.core.listeners == {}  # leaving the loop ended the subscription

    run(main())


def test_timeout_cancels_on_the_server() -> None:
    async def main() -> None:
        server = build_server()
        async with Client.memory(server) as c:
            with pytest.raises(TimeoutError):
                await c.call_tool("wait", timeout=0.2)
            await asyncio.sleep(0.05)
            assert c.link.connection.session.inflight == {}  # the server dropped the call

    run(main())


def test_era_fallback_on_a_legacy_server_that_errors() -> None:
    async def main() -> None:
        shared_verdicts().clear()
        started = time.monotonic()
        async with Client.stdio([*FAKE, "error"]) as c:
            assert (c.era, c.protocol_version) == ("legacy", "2025-03-26")
            assert (await c.call_tool("hello")).content[0].text == "hello from legacy"
        assert time.monotonic() - started < 4  # no probe timeout: the error decided at once
        key = f"stdio:{chr(0).join([*FAKE, 'error'])}"
        assert shared_verdicts().get(key) == Verdict("legacy", "2025-03-26")

    run(main())


def test_era_fallback_on_a_silent_legacy_server() -> None:
    async def main() -> None:
        shared_verdicts().clear()
        started = time.monotonic()
        async with Client.stdio([*FAKE, "silent"], probe_timeout=0.5) as c:
            assert c.era == "legacy"
            assert [x.name for x in await c.list_tools()] == ["hello"]
        assert time.monotonic() - started >= 0.5

    run(main())


def test_a_modern_server_without_a_common_version_is_not_mistaken_for_legacy() -> None:
    async def main() -> None:
        shared_verdicts().clear()
        with pytest.raises(McpError) as caught:
            async with Client.stdio([*FAKE, "modern-probe"]):
                pass
        assert caught.value.code == -32022

    run(main())


def test_pinned_eras_and_the_verdict_cache() -> None:
    async def main() -> None:
        shared_verdicts().clear()
        async with Client.stdio([*FAKE, "error"], era="legacy") as c:
            assert c.era == "legacy"
        with pytest.raises(McpError):  # pinned modern against a legacy server fails loudly
            async with Client.stdio([*FAKE, "error"], era="modern") as c:
                await c.list_tools()

    run(main())


def test_stdio_shutdown_and_stderr_forwarding(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="mcpgen.client")

    async def main() -> None:
        shared_verdicts().clear()
        async with Client.stdio([*FAKE, "error"], era="legacy") as c:
            await c.list_tools()
            link = c.link
        assert isinstance(link, StdioLink) and link.returncode is not None  # stdin closed: exited

    run(main())
    assert any("server stderr: got tools/list" in r.getMessage() for r in caplog.records)


def test_stdio_large_frames_both_ways_and_pipelined_calls() -> None:
    """A 3 MiB argument fills the pipe (the write waits for it to drain) and its 3 MiB
    echo arrives in many reads; 200 concurrent calls each get their own answer."""
    bench = Path(__file__).resolve().parents[2] / "examples" / "bench_server.py"

    async def main() -> None:
        async with Client.stdio([sys.executable, str(bench), "stdio"], era="modern") as c:
            big = "x" * (3 * 1024 * 1024 - 1000) + "é\r"
            result = await c.call_tool("echo", {"text": big})
            assert result.content[0].text == big
            texts = [f"call-{i}" for i in range(200)]
            results = await asyncio.gather(*(c.call_tool("echo", {"text": s}) for s in texts))
            assert [r.content[0].text for r in results] == texts

    run(main())


def test_stdio_close_escalates_to_sigkill_for_a_server_that_will_not_stop() -> None:
    """stdin closed, then SIGTERM, then SIGKILL, each after the grace period."""
    stubborn = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', file=sys.stderr, flush=True)\n"
        "while True:\n"
        "    time.sleep(1)\n"
    )

    async def main() -> None:
        link = StdioLink([sys.executable, "-c", stubborn], shutdown_grace=0.3)
        closed: list[bool] = []
        link.on_message = lambda frame, status, rid: None
        link.on_closed = lambda: closed.append(True)
        await link.start()
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await link.close()
        assert link.returncode == -9
        assert time.monotonic() - started < 3
        await asyncio.sleep(0.1)
        assert closed == [True]  # stdout's end reached the client once

    run(main())
