"""The OAuth client in use: `Client.http(url, auth=OAuth(...))` against an mcpgen
server behind a bearer check over real HTTP (both eras: the legacy one adds a GET
stream and a DELETE, each authorized), and the browser redirect on a loopback port."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from mcpgen import Client, ConfigurationError, Server
from mcpgen.auth import AuthorizationError, HeadlessRedirect, LoopbackRedirect, OAuth
from tests.auth.oauth_world import World
from tests.transports.httpharness import running


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


class Protected:
    """An mcpgen server's ASGI app that answers 401 unless the bearer token is one
    the world's authorization server issued."""

    def __init__(self, world: World) -> None:
        server = Server("guarded")

        @server.tool
        def whoami() -> str:
            """Says hello."""
            return "hello"

        self.app = server.asgi_app()
        self.world = world
        self.seen: list[tuple[str, str]] = []  # (method, token) of every request

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            token = headers.get("authorization", "").removeprefix("Bearer ")
            self.seen.append((scope["method"], token))
            if token not in self.world.tokens:
                challenge = (
                    f'Bearer error="invalid_token", resource_metadata="{self.world.prm_url()}"'
                )
                start = {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", challenge.encode())],
                }
                await send(start)
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


@contextmanager
def serving(app: Protected) -> Iterator[str]:
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", loop="asyncio", lifespan="off"
    )
    with running(uvicorn.Server(config)) as base:
        yield base


@pytest.mark.parametrize("era", ["modern", "legacy", "sse"])
def test_client_http_with_oauth_calls_a_protected_tool(era: str) -> None:
    world = World(issuer="https://as.example.com")
    app = Protected(world)
    with serving(app) as base:
        world.server_url = f"{base}/mcp"
        world.prm_resource = base  # the origin: /mcp and the legacy /sse alike
        transport = world.transport()  # the authorization server's side
        auth = OAuth(redirect=HeadlessRedirect(transport=transport), transport=transport)

        async def main() -> str:
            if era == "sse":
                client = Client.sse(f"{base}/sse", auth=auth, timeout=10)
            else:
                client = Client.http(world.server_url, era=era, auth=auth, timeout=10)
            async with client as c:
                result = await c.call_tool("whoami", {})
                return str(result.content[0].text)

        assert run(main()) == "hello"
    assert len(world.authorizations) == 1  # one login served every request
    authorized = [method for method, token in app.seen if token in world.tokens]
    assert all(token in world.tokens for _, token in app.seen[1:])
    per_era = {"modern": {"POST"}, "legacy": {"POST", "GET", "DELETE"}, "sse": {"GET", "POST"}}
    expected = per_era[era]
    assert set(authorized) == expected  # the legacy streams and DELETE carried it too
    assert app.seen[0][1] == ""  # the first request went out bare and was challenged


def test_auth_and_an_own_httpx_client_do_not_mix() -> None:
    with pytest.raises(ConfigurationError):
        Client.http("http://127.0.0.1:9/mcp", auth=OAuth(), httpx_client=httpx.AsyncClient())


def browser(world: World, *, forged_first: bool, seen: list[int]) -> Any:
    """A stand-in for the browser: follows the authorization URL (the world approves at
    once) and delivers the redirect to the loopback server, after a forged one."""

    def open_url(url: str) -> bool:
        location = world.handle(httpx.Request("GET", url)).headers["location"]
        targets = [location.replace("state=", "state=forged")] if forged_first else []
        for target in [*targets, location]:
            try:
                with urllib.request.urlopen(target, timeout=5) as answer:
                    seen.append(answer.status)
            except urllib.error.HTTPError as refused:
                seen.append(refused.code)
        return True

    return open_url


def test_the_loopback_redirect_refuses_a_foreign_state_and_keeps_waiting() -> None:
    world = World()
    statuses: list[int] = []
    redirect = LoopbackRedirect(open_url=browser(world, forged_first=True, seen=statuses))
    auth = OAuth(redirect=redirect, transport=world.transport())

    async def main() -> int:
        async with world.client(auth) as http:
            return (await http.post(world.server_url, json={})).status_code

    assert run(main()) == 200
    assert statuses == [400, 200]
    asked = world.authorizations[0]
    assert asked["redirect_uri"] == redirect.redirect_uri
    assert redirect.redirect_uri.startswith("http://127.0.0.1:")
    assert world.registrations[0]["application_type"] == "native"


def test_the_loopback_redirect_times_out_without_an_answer() -> None:
    redirect = LoopbackRedirect(open_url=lambda url: True, timeout=0.2)

    async def main() -> None:
        await redirect.authorize("https://as.example.com/authorize", "state")

    with pytest.raises(AuthorizationError, match="in time"):
        run(main())
