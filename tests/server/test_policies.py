"""The built-in policies (`mcpgen.middleware`) over memory, stdio and Streamable HTTP,
in both eras, against `policy_server.py`: timeouts (with cleanup), rate limits (with a
retry-after hint), the response size limit, response caching (and its invalidation),
and caller-aware visibility (hidden, refused, revealed at run time)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, McpError
from mcpgen.middleware import RATE_LIMITED, REQUEST_TIMEOUT, RESPONSE_TOO_LARGE
from mcpgen_types import latest as t
from tests.processes import http_server
from tests.server.policy_server import build

SERVER = str(Path(__file__).with_name("policy_server.py"))
ERAS = ["modern", "legacy"]
TRANSPORTS = ["memory", "stdio", "http"]


@contextlib.contextmanager
def serving(transport: str, tmp_path: Path) -> Iterator[str | None]:
    if transport == "http":
        with http_server(lambda port: [sys.executable, SERVER, str(port)], tmp_path / "log") as url:
            yield url
    else:
        yield None


@contextlib.asynccontextmanager
async def connect(transport: str, url: str | None, era: Any) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"era": era, "cache": False, "timeout": 30}
    if transport == "memory":
        client = Client.memory(build()[0], **options)
    elif transport == "stdio":
        client = Client.stdio([sys.executable, SERVER], **options)
    else:
        assert url is not None
        client = Client.http(url, **options)
    async with client:
        yield client


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


async def refused(client: Client, name: str, arguments: dict[str, Any] | None = None) -> McpError:
    with pytest.raises(McpError) as caught:
        await client.call_tool(name, arguments or {})
    return caught.value


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_policy_holds_on_every_transport_in_both_eras(
    transport: str, era: str, tmp_path: Path
) -> None:
    async def main(url: str | None) -> None:
        async with connect(transport, url, era) as client:
            # Timeouts: the tool's own limit, named; the handler's cleanup ran.
            error = await refused(client, "quick", {"seconds": 10})
            assert error.code == REQUEST_TIMEOUT
            assert "tool 'quick'" in error.message and "0.3 s" in error.message
            assert error.data == {"timeoutSeconds": 0.3}
            assert text(await client.call_tool("cleanups")) == "1"
            assert text(await client.call_tool("quick", {"seconds": 0})) == "done"
            # Rate limit: a burst of 2, then refused with a retry-after hint.
            for _ in range(2):
                assert text(await client.call_tool("limited")) == "ok"
            error = await refused(client, "limited")
            assert error.code == RATE_LIMITED
            assert error.data["retryAfterSeconds"] > 100  # 0.001 tokens a second
            # Size limit: a clear error instead of a huge reply.
            assert len(text(await client.call_tool("big", {"size": 1000}))) == 1000
            error = await refused(client, "big", {"size": 200_000})
            assert error.code == RESPONSE_TOO_LARGE
            assert error.data["limit"] == 65536 and error.data["size"] > 200_000
            # Caching: a read-only tool's result and a resource read are served again...
            first = text(await client.call_tool("counter"))
            assert text(await client.call_tool("counter")) == first
            read = (await client.read_resource("mem://reads")).contents[0]
            assert (await client.read_resource("mem://reads")).contents[0] == read
            # ...until a change is announced.
            await client.call_tool("bump")
            await asyncio.sleep(0.2)
            assert text(await client.call_tool("counter")) == str(int(first) + 1)
            await client.call_tool("touch")
            await asyncio.sleep(0.2)
            assert (await client.read_resource("mem://reads")).contents[0] != read
            # Visibility: a tool with a disabled tag is not listed and refused like an
            # unknown one, until it is enabled at run time.
            names = {tool.name for tool in await client.list_tools()}
            assert "secret" not in names and "counter" in names
            error = await refused(client, "secret")
            assert (error.code, error.message) == (-32602, "unknown tool: 'secret'")
            await client.call_tool("reveal")
            assert "secret" in {tool.name for tool in await client.list_tools()}
            assert text(await client.call_tool("secret")) == "hidden"

    with serving(transport, tmp_path) as url:
        asyncio.run(main(url))
    if transport == "http":  # the request log, one record per request, on the server's stderr
        log = (tmp_path / "log").read_text()
        assert f"mcpgen.requests method=tools/call era={era}" in log
        assert "outcome=error -32001 target=quick" in log
        assert "outcome=error -32029 target=limited" in log
