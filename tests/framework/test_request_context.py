"""`ctx.request`, `ctx.session_id`, `ctx.client_info`, `ctx.era`, `ctx.auth` and
`ctx.read_resource` on every transport: stdio, Streamable HTTP in both eras, HTTP+SSE,
and in memory; a task keeps its request's."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from mcpgen import Client, McpError
from mcpgen import types as t
from tests.framework.common import run
from tests.framework.context_server import build
from tests.transports.httpharness import serve

STDIO = [sys.executable, "-m", "tests.framework.context_server"]


async def who(client: Client) -> dict[str, Any]:
    result = await client.call_tool("who")
    block = result.content[0]
    assert isinstance(block, t.TextContent), result
    found: dict[str, Any] = json.loads(block.text)
    return found


async def read_own(client: Client, uri: str) -> str:
    result = await client.call_tool("read_own", {"uri": uri})
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_stdio_has_no_http_request_and_no_session_id(era: str) -> None:
    async def main() -> None:
        async with Client.stdio(STDIO, era=era, name="stdio-caller", timeout=20) as client:
            seen = await who(client)
            assert seen == {
                "request": None,
                "session_id": None,
                "era": era,
                "client": "stdio-caller",
                "auth": None,
            }
            assert await read_own(client, "memo://greeting") == "hello from a resource"

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_streamable_http_shows_the_post_and_the_legacy_session(era: str) -> None:
    with serve(build().asgi_app()) as (url, _):

        async def main() -> None:
            headers = {"X-Tenant": "acme", "Authorization": "Bearer not-for-handlers"}
            async with Client.http(
                url + "?v=1", headers=headers, era=era, name="http-caller", timeout=20
            ) as client:
                seen = await who(client)
                request = seen["request"]
                assert request["transport"] == "streamable-http"
                assert request["method"] == "POST"
                assert request["path"] == "/mcp"
                assert request["query"] == "v=1"
                assert request["headers"]["x-tenant"] == "acme"
                assert "authorization" not in request["headers"]
                assert request["client"][0] == "127.0.0.1"
                assert seen["era"] == era
                assert seen["client"] == "http-caller"
                assert seen["auth"] is None
                if era == "legacy":
                    # the id the server minted at initialize, as the client holds it
                    assert seen["session_id"] == request["headers"]["mcp-session-id"]
                    assert len(seen["session_id"]) >= 22
                else:
                    assert seen["session_id"] is None
                text = await read_own(client, "memo://user/ada")
                assert text == "user ada (read during tools/call)"

        run(main())


def test_http_sse_shows_the_message_post_and_its_session() -> None:
    with serve(build().asgi_app()) as (url, _):
        base = url.removesuffix("/mcp")

        async def main() -> None:
            headers = {"X-Tenant": "acme"}
            async with Client.sse(f"{base}/sse", headers=headers, timeout=20) as client:
                seen = await who(client)
                request = seen["request"]
                assert request["transport"] == "sse"
                assert request["method"] == "POST"
                assert request["path"] == "/messages"
                assert request["headers"]["x-tenant"] == "acme"
                assert f"session_id={seen['session_id']}" in request["query"]
                assert seen["era"] == "legacy"

        run(main())


def test_a_task_keeps_its_requests_http_context() -> None:
    with serve(build().asgi_app()) as (url, _):

        async def main() -> None:
            async with Client.http(url, era="modern", timeout=20) as client:
                handle = await client.call_tool("who_later", task=True)
                assert not isinstance(handle, t.CallToolResult), "expected a task"
                result = await handle.result()
                block = result.content[0]
                assert isinstance(block, t.TextContent)
                assert json.loads(block.text) == {"task": True, "path": "/mcp"}

        run(main())


def test_in_memory_and_an_unknown_resource() -> None:
    async def main() -> None:
        async with Client.memory(build()) as client:
            seen = await who(client)
            assert seen["request"] is None and seen["session_id"] is None
            with pytest.raises(McpError, match="resource not found"):
                await read_own(client, "memo://nothing")

    run(main())
