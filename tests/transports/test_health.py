"""The HTTP app's health endpoint (`HttpOptions.health_path`, `/healthz` by default):
200 while serving, 503 once shutting down; no token, no session, no allowed Host needed;
movable, or off; under a mount prefix too. The app driven in-process over ASGI."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpgen import Server
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from mcpgen.transports import McpAsgiApp

OK = {"status": "ok"}


def _server() -> Server:
    server = Server("weather", "1.0")

    @server.tool
    def forecast(city: str) -> str:
        return f"{city}: sunny"

    return server


def _requests(app: Any, *calls: tuple[str, str, dict[str, str]]) -> list[httpx.Response]:
    async def main() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return [await http.request(m, path, headers=h) for m, path, h in calls]

    return asyncio.run(main())


def test_healthz_answers_get_and_head_and_refuses_other_methods() -> None:
    get, head, post = _requests(
        _server().asgi_app(),
        ("GET", "/healthz", {}),
        ("HEAD", "/healthz", {}),
        ("POST", "/healthz", {}),
    )
    assert (get.status_code, get.json()) == (200, OK)
    assert get.headers["content-type"] == "application/json"
    assert head.status_code == 200
    assert (post.status_code, post.headers["allow"]) == (405, "GET, HEAD")


def test_no_host_check_no_token_for_the_probe() -> None:
    """A probe reaches the process by an address: the Host check guards the MCP paths only;
    with bearer auth, the health check still needs no token."""
    tokens = {"t": AccessToken(subject="a", scopes=frozenset())}
    auth = AuthSettings(StaticTokenVerifier(tokens), authorization_servers=["https://i.example"])
    for app in (_server().asgi_app(), _server().asgi_app(auth=auth)):
        probe, mcp = _requests(
            app,
            ("GET", "/healthz", {"host": "10.0.0.7:8000"}),
            ("POST", "/mcp", {"host": "10.0.0.7:8000"}),
        )
        assert (probe.status_code, probe.json()) == (200, OK)
        assert mcp.status_code in (401, 403)  # the MCP endpoint stays guarded


def test_the_path_moves_or_goes() -> None:
    moved, old = _requests(
        _server().asgi_app(health_path="/-/health"),
        ("GET", "/-/health", {}),
        ("GET", "/healthz", {}),
    )
    assert (moved.status_code, moved.json()) == (200, OK)
    assert old.status_code == 404
    (off,) = _requests(_server().asgi_app(health_path=None), ("GET", "/healthz", {}))
    assert off.status_code == 404


def test_503_once_shutting_down() -> None:
    app = _server().asgi_app()

    async def main() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            before = await http.get("/healthz")
            await app.shutdown()
            return before, await http.get("/healthz")

    before, after = asyncio.run(main())
    assert (before.status_code, before.json()) == (200, OK)
    assert (after.status_code, after.json()) == (503, {"status": "stopping"})


def test_under_a_mount_prefix() -> None:
    mcp: McpAsgiApp = _server().asgi_app()
    host = Starlette(routes=[Mount("/weather", app=mcp)], lifespan=mcp.lifespan)
    mounted, bare = _requests(host, ("GET", "/weather/healthz", {}), ("GET", "/healthz", {}))
    assert (mounted.status_code, mounted.json()) == (200, OK)
    assert bare.status_code == 404
