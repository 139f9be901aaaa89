"""mcpgen.Client over the deprecated HTTP+SSE transport (2024-11-05), against the small
old-transport server of sse_server.py: explicitly (`Client.sse`) and as the last step
of era detection (`Client.http` of a URL that refuses POSTs)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, ClientError, ConfigurationError, HttpStatusError, McpError
from mcpgen._client import Verdict, shared_verdicts
from mcpgen.transports._links import endpoint_key
from mcpgen.transports._sse_link import SseLink
from mcpgen_types import latest as t
from tests.client.sse_server import OldServer, serve
from tests.processes import everything_http


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


async def name_is_ada(params: Any) -> t.ElicitResult:
    assert params.message == "Your name?"
    return t.ElicitResult(action="accept", content={"name": "Ada"})


async def _session(client: Client, server: OldServer, version: str) -> None:
    """Handshake, tools, a notification, a server-to-client request, on one stream."""
    logs: list[tuple[Any, ...]] = []
    client.on_log = lambda *args: logs.append(args)
    async with client:
        assert (client.era, client.protocol_version) == ("legacy", version)
        assert client.server_info == {"name": "old-sse", "version": "0.1"}
        assert isinstance(client.link, SseLink)
        tools = [tool.name for tool in await client.list_tools()]
        assert tools == ["echo", "ask", "notify", "slow"]
        echoed = await client.call_tool("echo", {"text": "hi"})
        assert [c.text for c in echoed.content] == ["hi"]
        notified = await client.call_tool("notify")
        assert [c.text for c in notified.content] == ["notified"]
        greeted = await client.call_tool("ask")
        assert [c.text for c in greeted.content] == ["Hello, Ada!"]
        await asyncio.sleep(0.05)  # the log callback runs in its own task
        assert logs == [("info", "working", "old")]
        assert len(server.sessions) == 1
    for _ in range(100):  # closing the client closed the stream: the server saw it
        if not server.sessions:
            break
        await asyncio.sleep(0.02)
    assert not server.sessions
    methods = [m.get("method") for m in server.received]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    answer = next(m for m in server.received if "method" not in m)
    assert answer["result"] == {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
def test_explicit_sse_session(version: str) -> None:
    server = OldServer(version=version)
    with serve(server) as base:
        client = Client.sse(f"{base}/sse", on_elicitation=name_is_ada, timeout=10)
        run(_session(client, server, version))
    assert not any(r.startswith("POST /sse") for r in server.requests)  # no probe at all


@pytest.mark.parametrize("absolute", [False, True])
def test_relative_and_absolute_endpoints(absolute: bool) -> None:
    server = OldServer()
    with serve(server) as base:
        if absolute:  # an absolute endpoint on the same origin is fine
            server.endpoint = f"{base}/messages?session=s1"

        async def main() -> None:
            async with Client.sse(f"{base}/sse", timeout=10) as client:
                assert client.link.endpoint == f"{base}/messages?session=s1"  # type: ignore[attr-defined]
                assert (await client.call_tool("echo", {"text": "x"})).content[0].text == "x"

        run(main())


def test_cancellation_is_a_notification() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            async with Client.sse(f"{base}/sse", timeout=10) as client:
                with pytest.raises(TimeoutError):
                    await client.call_tool("slow", timeout=0.3)
                await asyncio.sleep(0.1)
                [cancel] = [
                    m for m in server.received if m.get("method") == "notifications/cancelled"
                ]
                call = next(m for m in server.received if m.get("method") == "tools/call")
                assert cancel["params"]["requestId"] == call["id"]
                assert not server.sessions["s1"].tasks  # the server stopped the call

        run(main())


@pytest.mark.parametrize("delay", [-1.0, 3.0])
def test_a_missing_or_late_endpoint_event_is_a_clear_timeout(delay: float) -> None:
    server = OldServer(endpoint_delay=delay)
    with serve(server) as base:

        async def main() -> None:
            started = time.monotonic()
            with pytest.raises(TimeoutError, match="no `endpoint` event"):
                async with Client.sse(f"{base}/sse", timeout=0.5):
                    pass
            assert time.monotonic() - started < 2.5

        run(main())


def test_an_endpoint_on_another_origin_is_refused() -> None:
    server = OldServer(endpoint="http://192.0.2.1:9/messages?session=s1")
    with serve(server) as base:

        async def main() -> None:
            with pytest.raises(ClientError, match="another origin"):
                async with Client.sse(f"{base}/sse", timeout=5):
                    pass
            assert server.received == []  # nothing was posted anywhere

        run(main())


def test_a_refused_post_is_an_error_not_a_hang() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            async with Client.sse(f"{base}/sse", timeout=30) as client:
                server.post_status = 404  # the server forgot the session
                started = time.monotonic()
                with pytest.raises(HttpStatusError, match="HTTP 404") as caught:
                    await client.list_tools()
                assert caught.value.status == 404
                assert time.monotonic() - started < 5

        run(main())


def test_the_end_of_the_stream_fails_waiting_requests() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            async with Client.sse(f"{base}/sse", timeout=30) as client:
                started = time.monotonic()
                with pytest.raises(ClientError, match="closed the connection"):
                    await client.call_tool("hang_up")
                assert time.monotonic() - started < 5

        run(main())


def test_a_url_that_is_no_sse_stream() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            with pytest.raises(ClientError, match="HTTP 405"):
                async with Client.sse(f"{base}/elsewhere", timeout=5):
                    pass

        run(main())


def test_the_sse_transport_is_legacy_only() -> None:
    with pytest.raises(ConfigurationError):
        Client.sse("http://127.0.0.1:9/sse", era="modern")


@pytest.mark.parametrize(
    ("status", "body"), [(405, ""), (404, ""), (400, ""), (405, "idless"), (404, "idless")]
)
def test_era_auto_falls_back_to_sse(status: int, body: str) -> None:
    """The probe and the initialize POST refused (no body, or an id-less JSON-RPC error):
    the URL is tried as an HTTP+SSE stream."""
    server = OldServer(other_status=status, other_json=body, version="2025-03-26")
    with serve(server) as base:
        url = f"{base}/sse"

        async def main() -> None:
            shared_verdicts().clear()
            client = Client.http(url, on_elicitation=name_is_ada, timeout=10)
            await _session(client, server, "2025-03-26")
            # the probe, the initialize POST, then the stream
            assert server.requests[:3] == ["POST /sse", "POST /sse", "GET /sse"]
            assert shared_verdicts().get(endpoint_key(url)) == Verdict("sse", "2025-03-26")

            server.requests.clear()  # the verdict is cached: straight to the stream
            async with Client.http(url, timeout=10) as again:
                assert again.era == "legacy" and isinstance(again.link, SseLink)
                assert (await again.call_tool("echo", {"text": "2"})).content[0].text == "2"
            assert server.requests[0] == "GET /sse"
            assert "POST /sse" not in server.requests

        run(main())


def test_an_answer_to_initialize_is_not_a_refusal() -> None:
    """A 400 whose JSON-RPC error answers our initialize (its id) is the server's word
    on the handshake: no HTTP+SSE attempt, the error as before."""
    server = OldServer(other_status=400, other_json="addressed")
    with serve(server) as base:

        async def main() -> None:
            shared_verdicts().clear()
            with pytest.raises(McpError, match="not allowed here") as caught:
                async with Client.http(f"{base}/mcp", timeout=5):
                    pass
            assert caught.value.code == -32600
            assert server.requests == ["POST /mcp", "POST /mcp"]  # the probe, initialize

        run(main())


def test_our_own_server_over_http_sse(tmp_path: Path) -> None:
    """mcpgen's HTTP app serves HTTP+SSE at /sse next to Streamable HTTP at /mcp."""
    with everything_http(tmp_path / "server.log") as url:
        sse_url = url.rsplit("/", 1)[0] + "/sse"

        async def main() -> None:
            shared_verdicts().clear()
            for client in (Client.sse(sse_url, timeout=10), Client.http(sse_url, timeout=10)):
                async with client:
                    assert isinstance(client.link, SseLink) and client.era == "legacy"
                    assert client.server_info == {"name": "mcpgen-everything", "version": "1.0.0"}
                    result = await client.call_tool("test_simple_text")
                    assert result.content[0].text.startswith("This is a simple text response")
            verdict = shared_verdicts().get(endpoint_key(sse_url))
            assert verdict is not None and verdict.era == "sse"

        run(main())


def test_pinned_legacy_http_also_reaches_sse() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            shared_verdicts().clear()
            async with Client.http(f"{base}/sse", era="legacy", timeout=10) as client:
                assert isinstance(client.link, SseLink)
                assert server.requests[:2] == ["POST /sse", "GET /sse"]  # no probe
            assert not shared_verdicts()  # a pinned era is not an observation

        run(main())


def test_http_without_sse_either_says_both() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            shared_verdicts().clear()
            with pytest.raises(ClientError, match=r"HTTP 405.*and the HTTP\+SSE transport failed"):
                async with Client.http(f"{base}/nothing", timeout=5):
                    pass

        run(main())


def test_a_stale_sse_verdict_is_probed_again() -> None:
    server = OldServer()
    with serve(server) as base:

        async def main() -> None:
            shared_verdicts().clear()
            shared_verdicts().put(endpoint_key(f"{base}/nothing"), Verdict("sse", "2024-11-05"))
            with pytest.raises(ClientError, match=r"HTTP 405.*HTTP\+SSE transport failed"):
                async with Client.http(f"{base}/nothing", timeout=5):
                    pass
            assert server.requests[:3] == ["GET /nothing", "POST /nothing", "POST /nothing"]

        run(main())


def test_sse_event_parsing() -> None:
    from mcpgen.transports._links import SseEvent, sse_events

    text = (
        ": a comment\n"
        "id: 1\nretry: 3000\ndata: \n\n"  # a priming event
        "event: endpoint\ndata: /messages?session_id=x\n\n"
        'data:{"a":\ndata: 1}\nid: 2\n\n'
        "retry: soon\ndata: x\n\n"  # a retry that is not a number is ignored
        "retry: \u00b2\ndata: y\n\n"  # so is one of digits that are no decimal
        "data: never dispatched"  # no blank line before the end
    )

    async def lines() -> Any:
        for line in text.split("\n"):
            yield line

    async def collect() -> list[SseEvent]:
        return [event async for event in sse_events(lines())]

    assert asyncio.run(collect()) == [
        SseEvent("message", "", "1", 3000),
        SseEvent("endpoint", "/messages?session_id=x", None, None),
        SseEvent("message", '{"a":\n1}', "2", None),
        SseEvent("message", "x", None, None),
        SseEvent("message", "y", None, None),
    ]
