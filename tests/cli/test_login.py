"""`mcpgen login`, `mcpgen logout` and `--auth` / `--header` on the client commands,
run as a user runs them, against a protected mcpgen server whose authorization server
is the in-process one of tests/auth/oauth_world.py served over loopback HTTP. The
browser is replaced by a headless redirect (MCPGEN_OAUTH_REDIRECT=headless)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mcpgen import Context, Server
from mcpgen.auth import AccessToken, AuthSettings
from mcpgen.cli._auth import token_dir
from tests.auth.oauth_world import World
from tests.processes import free_port
from tests.transports.httpharness import running

MCPGEN = str(Path(sys.executable).parent / "mcpgen")


class WorldTokens:
    """Accepts the tokens the world's authorization server issued (and still holds)."""

    def __init__(self, world: World) -> None:
        self.world = world

    async def verify(self, token: str) -> AccessToken | None:
        scopes = self.world.tokens.get(token)
        return None if scopes is None else AccessToken(subject="cli-user", scopes=frozenset(scopes))


def protected(world: World) -> Any:
    server = Server("cli-guarded")

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller's subject."""
        return ctx.auth.subject if ctx.auth and ctx.auth.subject else "?"

    settings = AuthSettings(
        WorldTokens(world),
        resource=world.server_url,
        authorization_servers=[world.issuer],
        required_scopes=["mcp"],
        cache_seconds=0,  # a revoked token is refused at once
    )
    mcp = server.asgi_app(auth=settings)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if path == "/mcp" or path.startswith("/.well-known/oauth-protected-resource"):
            await mcp(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        query = scope["query_string"].decode()
        request = httpx.Request(
            scope["method"],
            f"{world.origin}{path}" + (f"?{query}" if query else ""),
            headers=[(k.decode(), v.decode()) for k, v in scope["headers"]],
            content=body,
        )
        answer = world.handle(request)
        headers = [(k.encode(), v.encode()) for k, v in answer.headers.items()]
        await send(
            {"type": "http.response.start", "status": answer.status_code, "headers": headers}
        )
        await send({"type": "http.response.body", "body": answer.content})

    return app


@pytest.fixture
def world() -> Iterator[World]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    world = World(server_url=f"{base}/mcp", issuer=base)
    config = uvicorn.Config(
        protected(world), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    with running(uvicorn.Server(config)):
        yield world


def mcpgen(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MCPGEN_OAUTH_DIR": str(home), "MCPGEN_OAUTH_REDIRECT": "headless"}
    return subprocess.run(
        [MCPGEN, *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )


@pytest.mark.slow
def test_login_then_auth_oauth_then_logout(world: World, tmp_path: Path) -> None:
    url, home = world.server_url, tmp_path / "oauth"

    # Without credentials: the 401 and its challenge, exit code 2.
    refused = mcpgen(home, "tools", url)
    assert refused.returncode == 2, refused.stdout
    assert "HTTP 401" in refused.stderr and 'scope="mcp"' in refused.stderr

    logged = mcpgen(home, "login", url, "--scope", "extra")
    assert logged.returncode == 0, logged.stderr
    assert logged.stdout.startswith(f"logged in to {url}: issuer {world.issuer}, ")
    assert "refreshable" in logged.stdout
    (authorization,) = world.authorizations
    assert set(authorization["scope"].split()) == {"mcp", "extra"}
    (kept,) = home.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600

    # The kept grant serves later commands: no new authorization.
    called = mcpgen(home, "call", url, "whoami", "--auth", "oauth")
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "cli-user"
    assert len(world.authorizations) == 1

    # The access token revoked: the refresh token gets a new one, still no login.
    world.tokens.clear()
    listed = mcpgen(home, "tools", url, "--auth", "oauth")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("whoami()")
    assert len(world.authorizations) == 1 and len(world.tokens) == 1

    # A token given as is, and a header given as is.
    (token,) = world.tokens
    bearer = mcpgen(home, "call", url, "whoami", "--auth", f"bearer:{token}")
    assert bearer.returncode == 0 and bearer.stdout.strip() == "cli-user", bearer.stderr
    header = mcpgen(home, "call", url, "whoami", "-H", f"Authorization: Bearer {token}")
    assert header.returncode == 0 and header.stdout.strip() == "cli-user", header.stderr
    wrong = mcpgen(home, "tools", url, "--header", "Authorization: Bearer nope")
    assert wrong.returncode == 2 and 'error="invalid_token"' in wrong.stderr

    out = mcpgen(home, "logout", url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"logged out of {url} ({world.issuer})"
    assert list(home.iterdir()) == []
    again = mcpgen(home, "logout", url)
    assert again.returncode == 1 and "not logged in" in again.stderr

    # Logged out: --auth oauth logs in afresh.
    fresh = mcpgen(home, "call", url, "whoami", "--auth", "oauth")
    assert fresh.returncode == 0 and fresh.stdout.strip() == "cli-user", fresh.stderr
    assert len(world.authorizations) == 2


@pytest.mark.slow
def test_bad_auth_options(tmp_path: Path) -> None:
    stdio = ["--", sys.executable, "-c", "pass"]
    on_stdio = mcpgen(tmp_path, "tools", "--auth", "oauth", *stdio)
    assert on_stdio.returncode == 2 and "need a URL" in on_stdio.stderr
    unknown = mcpgen(tmp_path, "tools", "http://127.0.0.1:9/mcp", "--auth", "basic:x")
    assert unknown.returncode == 2 and "oauth or bearer:TOKEN" in unknown.stderr
    header = mcpgen(tmp_path, "tools", "http://127.0.0.1:9/mcp", "-H", "no-colon")
    assert header.returncode == 2 and "Name: value" in header.stderr


def test_where_grants_are_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MCPGEN_OAUTH_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert token_dir() == tmp_path / "mcpgen" / "oauth"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert token_dir() == tmp_path / "home" / ".config" / "mcpgen" / "oauth"
    monkeypatch.setenv("MCPGEN_OAUTH_DIR", str(tmp_path / "elsewhere"))
    assert token_dir() == tmp_path / "elsewhere"
