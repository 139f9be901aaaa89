"""A redirecting HTTP endpoint (a framework answering 307 from `/weather` to
`/weather/`): the client follows 307/308 within the origin, bounded, with the same
method, body and MCP headers, and stays at the new URL; anything else fails at once
with the status and the Location. Before, such an endpoint failed the connection (and
earlier still, hung until the timeout)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from mcpgen import Client, ClientError, HttpStatusError, Server
from mcpgen._client import VerdictCache
from mcpgen.transports._link_base import endpoint_key
from tests.transports.httpharness import running

MCPGEN = str(Path(sys.executable).parent / "mcpgen")


def build() -> Server:
    server = Server("weather")

    @server.tool
    def forecast(city: str) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}"

    return server


class Redirecting:
    """The server's ASGI app at `/mcp` (and at `/weather/`, as a mounted app would be),
    behind `moves`: path -> (status, Location). Records what reached the server."""

    def __init__(self, moves: dict[str, tuple[int, str]]) -> None:
        self.app = build().asgi_app()
        self.moves = moves
        self.redirected = 0
        self.served: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] in self.moves:
            status, location = self.moves[scope["path"]]
            self.redirected += 1
            headers = [(b"location", location.encode()), (b"content-type", b"text/plain")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b"Redirecting..."})
            return
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            self.served.append((scope["method"], scope["path"], headers))
            if scope["path"] == "/weather/":
                scope = {**scope, "path": "/mcp", "raw_path": b"/mcp"}
        await self.app(scope, receive, send)


@contextmanager
def serving(app: Redirecting) -> Iterator[str]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", loop="asyncio", lifespan="off"
    )
    with running(uvicorn.Server(config)) as base:
        yield base


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.mark.parametrize("era", ["auto", "legacy"])
@pytest.mark.parametrize(("status", "target"), [(307, "/weather/"), (308, "/mcp")])
def test_a_same_origin_redirect_is_followed_and_kept(era: str, status: int, target: str) -> None:
    app = Redirecting({"/weather": (status, target)})
    verdicts = VerdictCache()
    with serving(app) as base:

        async def main() -> None:
            async with Client.http(f"{base}/weather", era=era, verdicts=verdicts, timeout=10) as c:
                assert c.era == ("modern" if era == "auto" else "legacy")
                assert [tool.name for tool in await c.list_tools()] == ["forecast"]
                result = await c.call_tool("forecast", {"city": "Oslo"})
                assert result.content[0].text == "sunny in Oslo"
                assert c.link.url == base + target  # type: ignore[attr-defined]

        run(main())
    assert app.redirected == 1  # later requests of the client went straight to the new URL
    assert {method for method, _, _ in app.served} <= {"POST", "GET", "DELETE"}
    posts = [headers for method, path, headers in app.served if method == "POST"]
    assert all(h["content-type"] == "application/json" for h in posts)
    if era == "auto":  # the redirected probe kept its MCP headers (and the verdict its URL)
        assert posts[0]["mcp-method"] == "server/discover"
        assert verdicts.get(endpoint_key(base + target)) is not None
        assert verdicts.get(endpoint_key(f"{base}/weather")) is None


def test_five_hops_are_followed() -> None:
    hops = {f"/h{i}": (307, f"/h{i + 1}") for i in range(4)} | {"/h4": (307, "/mcp")}
    with serving(Redirecting(hops)) as base:

        async def main() -> None:
            async with Client.http(f"{base}/h0", era="modern", timeout=10) as c:
                assert (await c.call_tool("forecast", {"city": "Rome"})).content[0].text

        run(main())


@pytest.mark.parametrize(
    ("moves", "why"),
    [
        ({"/a": (307, "/b"), "/b": (307, "/a")}, "a redirect loop"),
        ({f"/h{i}": (307, f"/h{i + 1}") for i in range(6)} | {"/h6": (307, "/mcp")}, "more than 5"),
        ({"/a": (302, "/mcp")}, ""),
        ({"/a": (301, "/mcp")}, ""),
        ({"/a": (303, "/mcp")}, ""),
        ({"/a": (307, "//localhost:{port}/mcp")}, "only to the same origin"),
        ({"/a": (308, "https://127.0.0.1:{port}/mcp")}, "only to the same origin"),
    ],
)
@pytest.mark.parametrize("era", ["auto", "modern", "legacy"])
def test_other_redirects_fail_at_once_naming_status_and_location(
    moves: dict[str, tuple[int, str]], why: str, era: str
) -> None:
    """Bounded and fast: a loop, a sixth hop, a redirect that would turn the POST into
    a GET, another origin (here the same server under another host name)."""
    app = Redirecting(moves)
    with serving(app) as base:
        port = base.rsplit(":", 1)[1]
        app.moves = {p: (s, where.replace("{port}", port)) for p, (s, where) in moves.items()}
        start = "/h0" if "/h0" in moves else "/a"

        async def main() -> None:
            with pytest.raises(ClientError) as caught:
                async with Client.http(f"{base}{start}", era=era, timeout=30) as c:
                    await c.list_tools()
            error = caught.value
            assert isinstance(error, HttpStatusError) and error.status in (301, 302, 303, 307, 308)
            assert f"HTTP {error.status} (to {error.location})" in str(error)
            assert why in str(error)

        began = time.monotonic()
        run(main())
        assert time.monotonic() - began < 5
    assert not app.served  # nothing reached the server (another origin was not visited)
    assert app.redirected <= 2 * 7  # the probe and the handshake, each bounded


@pytest.mark.slow
def test_the_cli_follows_a_redirect() -> None:
    with serving(Redirecting({"/weather": (307, "/weather/")})) as base:
        proc = subprocess.run(
            [MCPGEN, "tools", f"{base}/weather"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("forecast(city)")
