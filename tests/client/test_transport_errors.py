"""One error model on every link: a `TransportError` subclass says how the transport
failed (connect, timeout, HTTP status, closed), whichever transport it was; a JSON-RPC
error is only ever one the server sent."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvicorn

from mcpgen import (
    Client,
    ClientError,
    ConnectError,
    ConnectionClosedError,
    Context,
    HttpStatusError,
    McpError,
    ProtocolViolationError,
    Server,
    TransportError,
    TransportTimeoutError,
)
from tests.client.sse_server import OldServer
from tests.client.sse_server import serve as serve_old
from tests.transports.httpharness import running

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_the_family() -> None:
    for kind in (ConnectError, ConnectionClosedError, HttpStatusError, TransportTimeoutError):
        assert issubclass(kind, TransportError) and issubclass(kind, ClientError)
        assert not issubclass(kind, McpError)
    assert issubclass(TransportTimeoutError, TimeoutError)


# -- stdio ----------------------------------------------------------------------------------------
def test_stdio_a_server_that_cannot_start() -> None:
    async def main() -> None:
        with pytest.raises(ConnectError, match="cannot start the server"):
            async with Client.stdio(["/nonexistent/mcp-server"], era="modern"):
                pass

    run(main())


def test_stdio_a_server_that_exits() -> None:
    """The process reads one request and exits: the request fails as closed, and so does
    every later one, at once."""
    exits = "import sys; sys.stdin.readline(); sys.exit(3)"

    async def main() -> None:
        async with Client.stdio([sys.executable, "-c", exits], era="modern") as c:
            with pytest.raises(ConnectionClosedError, match="closed the connection"):
                await c.list_tools()
            with pytest.raises(ConnectionClosedError):
                await asyncio.wait_for(c.list_prompts(), 5)

    run(main())


def test_stdio_timeout() -> None:
    mute = "import sys, time; sys.stdin.readline(); time.sleep(30)"

    async def main() -> None:
        async with Client.stdio([sys.executable, "-c", mute], era="modern", timeout=0.3) as c:
            with pytest.raises(TransportTimeoutError, match=r"no response within 0\.3 s"):
                await c.list_tools()

    run(main())


# -- in memory ------------------------------------------------------------------------------------
def test_memory_closed() -> None:
    srv = Server("dies")

    @srv.tool
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(30)
        return "never"

    async def main() -> None:
        async with Client.memory(srv) as c:
            call = asyncio.ensure_future(c.call_tool("slow"))
            await asyncio.sleep(0.05)
            await c.link.connection.close()  # type: ignore[attr-defined]
            with pytest.raises(ConnectionClosedError):
                await asyncio.wait_for(call, 5)
            with pytest.raises(ConnectionClosedError):
                await c.list_tools()

    run(main())


# -- Streamable HTTP -------------------------------------------------------------------------------
def status_app(status: int, body: bytes, headers: tuple[tuple[bytes, bytes], ...] = ()) -> Any:
    """An ASGI app answering every request with `status` and `body` (no JSON-RPC)."""

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": status, "headers": list(headers)})
        await send({"type": "http.response.body", "body": body})

    return app


async def never_answers(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "http":
        await asyncio.sleep(30)


def serve_app(app: Any) -> Any:
    """A plain ASGI app under uvicorn on a free loopback port; yields its base URL."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        loop="asyncio",
        timeout_graceful_shutdown=1,
    )
    return running(uvicorn.Server(config))


@pytest.mark.parametrize("era", ["auto", "modern"])
def test_http_a_server_that_is_not_there(era: str) -> None:
    async def main() -> None:
        with pytest.raises(ConnectError, match="cannot connect"):
            async with Client.http(f"http://127.0.0.1:{free_port()}/mcp", era=era) as c:
                await c.list_tools()

    run(main())


@pytest.mark.parametrize("era", ["auto", "modern"])
def test_http_500(era: str) -> None:
    """A 500 without a JSON-RPC body: its status and body, in either era (a probe that
    gets one thinks the server legacy; its initialize then fails the same way)."""
    with serve_app(status_app(500, b"boom")) as base:

        async def main() -> None:
            with pytest.raises(HttpStatusError, match="HTTP 500: boom") as caught:
                async with Client.http(f"{base}/mcp", era=era, timeout=5) as c:
                    await c.list_tools()
            assert (caught.value.status, caught.value.body) == (500, "boom")

        run(main())


def test_http_redirect_names_its_location() -> None:
    moved = status_app(307, b"", ((b"location", b"http://elsewhere.example/mcp"),))
    with serve_app(moved) as base:

        async def main() -> None:
            async with Client.http(f"{base}/mcp", era="modern", timeout=5) as c:
                with pytest.raises(HttpStatusError) as caught:
                    await c.list_tools()
            assert caught.value.status == 307
            assert caught.value.location == "http://elsewhere.example/mcp"

        run(main())


def test_http_timeout() -> None:
    with serve_app(never_answers) as base:

        async def main() -> None:
            async with Client.http(f"{base}/mcp", era="modern", timeout=0.3) as c:
                with pytest.raises(TransportTimeoutError):
                    await c.list_tools()

        run(main())


def test_a_json_rpc_error_is_only_what_the_server_sent() -> None:
    """A 4xx whose body is not JSON-RPC is no made-up JSON-RPC error: a breach."""
    odd = status_app(400, b'{"detail": "nope"}', ((b"content-type", b"application/json"),))
    with serve_app(odd) as base:

        async def main() -> None:
            async with Client.http(f"{base}/mcp", era="modern", timeout=5) as c:
                with pytest.raises(ProtocolViolationError, match="HTTP 400: not a JSON-RPC answer"):
                    await c.list_tools()

        run(main())


# -- HTTP+SSE -------------------------------------------------------------------------------------
def test_sse_a_server_that_is_not_there() -> None:
    async def main() -> None:
        with pytest.raises(ConnectError, match="cannot connect"):
            async with Client.sse(f"http://127.0.0.1:{free_port()}/sse", timeout=5):
                pass

    run(main())


def test_sse_a_stream_that_is_not_one() -> None:
    with serve_app(status_app(404, b"no such stream")) as base:

        async def main() -> None:
            with pytest.raises(HttpStatusError, match="HTTP 404") as caught:
                async with Client.sse(f"{base}/sse", timeout=5):
                    pass
            assert caught.value.status == 404

        run(main())


def test_sse_the_end_of_the_stream() -> None:
    server = OldServer()
    with serve_old(server) as base:

        async def main() -> None:
            async with Client.sse(f"{base}/sse", timeout=30) as client:
                with pytest.raises(ConnectionClosedError, match="closed the connection"):
                    await client.call_tool("hang_up")
                with pytest.raises(ConnectionClosedError):
                    await client.list_tools()

        run(main())


def test_a_refused_listen_request_raises_its_failure() -> None:
    with serve_app(status_app(503, b"busy")) as base:

        async def main() -> None:
            async with Client.http(f"{base}/mcp", era="modern", timeout=30) as c:
                with pytest.raises(HttpStatusError, match="HTTP 503: busy"):
                    async for _ in c.listen(tools=True):
                        pass

        run(main())


BREACHING = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    rid = message["id"]
    print("not json at all", flush=True)  # stray: dropped
    print(json.dumps({"jsonrpc": "2.0", "method": 5}), flush=True)  # stray: dropped
    if message["method"] == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}}), flush=True)
    else:  # a result and an error at once: no JSON-RPC answer
        answer = {"jsonrpc": "2.0", "id": rid, "result": {}, "error": {"code": 1, "message": "x"}}
        print(json.dumps(answer), flush=True)
"""


def test_a_breach_fails_its_request_and_stray_lines_are_dropped() -> None:
    async def main() -> None:
        async with Client.stdio([sys.executable, "-c", BREACHING], era="modern") as c:
            assert await c.list_tools() == []
            with pytest.raises(ProtocolViolationError, match="not a JSON-RPC answer"):
                await c.list_prompts()

    run(main())
