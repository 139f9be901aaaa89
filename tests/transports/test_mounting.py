"""The ASGI app mounted under a prefix of a bigger app (Starlette's `Mount`, FastAPI's
`mount`, and a host that strips the prefix from `path` as older frameworks did): both
eras of Streamable HTTP, the HTTP+SSE transport (whose `endpoint` event must name the
prefixed URL) and mcpgen's own client, all served by uvicorn on an ephemeral port. The
mounted app gets no lifespan events from its host."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcpgen import Client
from mcpgen.transports import McpAsgiApp
from mcpgen.transports._asgi import Receive, Scope, Send, route_path
from mcpgen_types import latest as t
from tests.server.conftest import build_server
from tests.transports.httpharness import body, modern_headers, rpc, running, sse_events

LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
ECHO = {"name": "echo", "arguments": {"text": "hi"}}
HOSTS = ["starlette", "fastapi", "stripping"]


async def _health(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


def _stripping(mcp: McpAsgiApp, prefix: str) -> Any:
    """A host that takes the prefix off `path` and moves it to `root_path`, as Starlette
    did before it kept the full path."""

    async def host(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(prefix + "/"):
            root = scope.get("root_path", "") + prefix
            scope = {**scope, "path": scope["path"][len(prefix) :], "root_path": root}
            await mcp(scope, receive, send)
        elif scope["type"] == "http":
            found = scope["path"] == "/health"
            reply = PlainTextResponse("ok" if found else "not found", 200 if found else 404)
            await reply(scope, receive, send)

    return host


def _host(kind: str, mcp: McpAsgiApp) -> Any:
    if kind == "starlette":
        return Starlette(routes=[Route("/health", _health), Mount("/weather", app=mcp)])
    if kind == "fastapi":

        @contextlib.asynccontextmanager
        async def lifespan(app: FastAPI) -> AsyncIterator[None]:
            yield
            await mcp.shutdown()  # the pattern README shows

        api = FastAPI(lifespan=lifespan)
        api.get("/health")(lambda: "ok")
        api.mount("/weather", mcp)
        return api
    return _stripping(mcp, "/weather")


@pytest.fixture(scope="module", params=HOSTS)
def mounted(request: pytest.FixtureRequest) -> Iterator[tuple[str, McpAsgiApp]]:
    """(the host's base URL, the mounted app) with the app under /weather."""
    mcp = build_server().asgi_app(keepalive_seconds=0.3)
    config = uvicorn.Config(
        _host(request.param, mcp), "127.0.0.1", 0, log_level="warning", loop="asyncio"
    )
    with running(uvicorn.Server(config)) as base:
        yield base, mcp
    assert mcp.stopping == (request.param == "fastapi")  # only a host's own lifespan stops it


@pytest.fixture
def base(mounted: tuple[str, McpAsgiApp]) -> str:
    return mounted[0]


def _reply(r: httpx.Response) -> Any:
    if r.headers["content-type"].startswith("text/event-stream"):
        return sse_events(r.text)[-1]
    return r.json()


def test_modern_call_under_the_prefix(http: httpx.Client, base: str) -> None:
    r = http.post(
        f"{base}/weather/mcp",
        content=body(1, "tools/call", ECHO),
        headers=modern_headers("tools/call", "echo"),
    )
    assert r.status_code == 200, r.text
    assert r.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert r.json()["result"]["resultType"] == "complete"
    # The host's own routes still answer, and the endpoint is not also served unprefixed.
    assert http.get(f"{base}/health").text.strip('"') == "ok"
    unprefixed = http.post(
        f"{base}/mcp", content=body(1, "tools/call", ECHO), headers=modern_headers("tools/call")
    )
    assert unprefixed.status_code == 404
    elsewhere = http.post(
        f"{base}/weather/nope",
        content=body(1, "tools/call", ECHO),
        headers=modern_headers("tools/call", "echo"),
    )
    assert elsewhere.status_code == 404


def test_legacy_session_under_the_prefix(http: httpx.Client, base: str) -> None:
    url = f"{base}/weather/mcp"
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"},
    }
    r = http.post(url, content=rpc(0, "initialize", params), headers=LEGACY)
    assert r.status_code == 200, r.text
    assert r.json()["result"]["protocolVersion"] == "2025-11-25"
    headers = {
        **LEGACY,
        "mcp-session-id": r.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    done = http.post(url, content=rpc(None, "notifications/initialized"), headers=headers)
    assert done.status_code == 202
    called = _reply(http.post(url, content=rpc(1, "tools/call", ECHO), headers=headers))
    assert called["id"] == 1 and called["result"]["content"][0]["text"] == "hi"
    assert "resultType" not in called["result"]
    # A streamed response (progress first) passes through the host as well.
    steps = {"name": "steps", "arguments": {"count": 2}, "_meta": {"progressToken": "p"}}
    r = http.post(url, content=rpc(2, "tools/call", steps), headers=headers)
    assert r.headers["content-type"].startswith("text/event-stream")
    events = sse_events(r.text)
    assert [e["params"]["progress"] for e in events if e.get("method") == "notifications/progress"]
    assert events[-1]["result"]["content"][0]["text"] == "2 steps"
    assert http.delete(url, headers=headers).status_code == 200
    assert http.post(url, content=rpc(3, "ping"), headers=headers).status_code == 404


async def _sse(response: httpx.Response) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) of each SSE event as it arrives; comments skipped."""
    name, data = "message", []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield name, "\n".join(data)
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())


def test_http_sse_endpoint_names_the_prefix(base: str) -> None:
    async def main() -> None:
        async with (
            httpx.AsyncClient(timeout=10) as http,
            http.stream(
                "GET", f"{base}/weather/sse", headers={"accept": "text/event-stream"}
            ) as stream,
        ):
            assert stream.status_code == 200
            events = _sse(stream)
            kind, endpoint = await anext(events)
            assert kind == "endpoint" and endpoint.startswith("/weather/messages?session_id=")
            params = {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            }
            headers = {"content-type": "application/json"}
            posted = await http.post(
                base + endpoint, content=rpc(0, "initialize", params), headers=headers
            )
            assert posted.status_code == 202
            kind, data = await anext(events)
            assert kind == "message" and json.loads(data)["result"]["protocolVersion"] == (
                "2024-11-05"
            )
            note = rpc(None, "notifications/initialized")
            assert (
                await http.post(base + endpoint, content=note, headers=headers)
            ).status_code == 202
            call = rpc(1, "tools/call", ECHO)
            assert (
                await http.post(base + endpoint, content=call, headers=headers)
            ).status_code == 202
            kind, data = await anext(events)
            reply = json.loads(data)
            assert reply["id"] == 1 and reply["result"]["content"][0]["text"] == "hi"

    asyncio.run(asyncio.wait_for(main(), 20))


def _text(result: t.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, t.TextContent)
    return block.text


@pytest.mark.parametrize("era", ["modern", "legacy", "auto"])
def test_our_client_reaches_the_mounted_app(base: str, era: str) -> None:
    async def main() -> None:
        async with Client.http(f"{base}/weather/mcp", era=era, timeout=10) as client:
            assert _text(await client.call_tool("echo", {"text": "hi"})) == "hi"
            assert client.era == ("legacy" if era == "legacy" else "modern")
        async with Client.sse(f"{base}/weather/sse", timeout=10) as client:
            assert _text(await client.call_tool("echo", {"text": "old"})) == "old"

    asyncio.run(asyncio.wait_for(main(), 30))


def test_behind_a_proxy_with_uvicorn_root_path(http: httpx.Client) -> None:
    """uvicorn's `--root-path` (a proxy took the prefix off): uvicorn puts it back in
    `path`, and the endpoint event names the URL the proxy serves."""
    mcp = build_server().asgi_app()
    config = uvicorn.Config(
        mcp, "127.0.0.1", 0, log_level="warning", loop="asyncio", root_path="/weather"
    )
    with running(uvicorn.Server(config)) as base:
        r = http.post(
            f"{base}/mcp",
            content=body(1, "tools/call", ECHO),
            headers=modern_headers("tools/call", "echo"),
        )
        assert r.status_code == 200, r.text
        assert r.json()["result"]["content"][0]["text"] == "hi"
        with http.stream("GET", f"{base}/sse", headers={"accept": "text/event-stream"}) as s:
            lines = s.iter_lines()
            first = next(lines), next(lines)
        assert first[0] == "event: endpoint"
        assert first[1].startswith("data: /weather/messages?session_id=")


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("/mcp", None, "/mcp"),
        ("/mcp", "", "/mcp"),
        ("/weather/mcp", "/weather", "/mcp"),  # the prefix kept in `path` (Starlette now)
        ("/mcp", "/weather", "/mcp"),  # the prefix taken off (older frameworks)
        ("/mcp", "/m", "/mcp"),  # taken off, and the root is a prefix of the rest as text
        ("/weatherly/mcp", "/weather", "/weatherly/mcp"),
        ("/a/b/sse", "/a/b", "/sse"),
        ("/weather", "/weather", ""),
    ],
)
def test_route_path(path: str, root: str | None, expected: str) -> None:
    scope: Scope = {"type": "http", "path": path}
    if root is not None:
        scope["root_path"] = root
    assert route_path(scope) == expected
