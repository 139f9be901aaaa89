"""Revocation (RFC 7009) against a real OpenID provider (npm oidc-provider, its
revocation feature on): `mcpgen logout URL` revokes the kept refresh and access
tokens, after which the provider's introspection calls both inactive, a refresh is
refused and the protected server refuses the old access token; `OAuth.revoke()` as a
library call, where the provider cannot revoke a JWT access token (reported, not
hidden)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mcpgen import Client, Context, Server
from mcpgen.auth import (
    AuthSettings,
    FileTokenStorage,
    InMemoryTokenStorage,
    IntrospectionVerifier,
    OAuth,
    StaticTokenVerifier,
)
from tests.auth.oidc import INTROSPECTOR, ScriptedLogin, provider
from tests.processes import free_port
from tests.transports.httpharness import running

pytestmark = pytest.mark.needs_node

MCPGEN = str(Path(sys.executable).parent / "mcpgen")


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


class Later:
    """An ASGI app whose inner app is set once the provider (its issuer) is known."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@dataclass
class World:
    issuer: str
    config: dict[str, Any]  # the provider's OpenID configuration
    opaque: str  # a server checking opaque tokens by introspection
    jwt: str  # a server whose tokens are JWTs (only its metadata is used here)


def _server(issuer: str, resource: str, verifier: Any) -> Any:
    server = Server("revocation-guarded")

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller's subject."""
        return ctx.auth.subject if ctx.auth and ctx.auth.subject else "?"

    settings = AuthSettings(
        verifier,
        resource=resource,
        authorization_servers=[issuer],
        required_scopes=["mcp:tools"],
        cache_seconds=0,  # each request asks the provider: a revoked token shows at once
    )
    return server.asgi_app(auth=settings)


@contextmanager
def world() -> Iterator[World]:
    with ExitStack() as stack:
        apps = Later(), Later()
        bases = [
            stack.enter_context(
                running(
                    uvicorn.Server(
                        uvicorn.Config(
                            app,
                            host="127.0.0.1",
                            port=free_port(),
                            log_level="warning",
                            lifespan="off",
                        )
                    )
                )
            )
            for app in apps
        ]
        opaque, jwt = (f"{base}/mcp" for base in bases)
        issuer = stack.enter_context(provider(jwt, opaque=opaque))
        config = httpx.get(f"{issuer}/.well-known/openid-configuration").json()
        introspection = IntrospectionVerifier(
            config["introspection_endpoint"],
            client_id=INTROSPECTOR[0],
            client_secret=INTROSPECTOR[1],
            cache_seconds=0,
        )
        apps[0].app = _server(issuer, opaque, introspection)
        apps[1].app = _server(issuer, jwt, StaticTokenVerifier({}))
        yield World(issuer, config, opaque, jwt)


def introspect(w: World, token: str) -> dict[str, Any]:
    answer = httpx.post(
        w.config["introspection_endpoint"], data={"token": token}, auth=INTROSPECTOR
    )
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def refresh(w: World, client_id: str, token: str) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    return httpx.post(w.config["token_endpoint"], data=form)


async def whoami(url: str, auth: OAuth) -> str:
    async with Client.http(url, auth=auth, timeout=30) as client:
        return str((await client.call_tool("whoami")).content[0].text)  # type: ignore[union-attr]


@pytest.mark.slow
def test_mcpgen_logout_revokes_at_the_provider(tmp_path: Path) -> None:
    with world() as w:
        assert "revocation_endpoint" in w.config
        home = tmp_path / "oauth"
        auth = OAuth(redirect=ScriptedLogin("alice"), storage=FileTokenStorage(home))
        assert run(whoami(w.opaque, auth)) == "alice"
        grant = auth.grant
        assert grant is not None and grant.access_token and grant.refresh_token
        access, refresh_token = grant.access_token, grant.refresh_token
        assert introspect(w, access)["active"] is True
        assert introspect(w, refresh_token)["active"] is True

        env = {**os.environ, "MCPGEN_OAUTH_DIR": str(home)}
        out = subprocess.run(
            [MCPGEN, "logout", w.opaque],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"logged out of {w.opaque} ({w.issuer})"
        assert out.stderr == ""  # both tokens revoked: nothing to warn about
        assert list(home.iterdir()) == []

        assert introspect(w, refresh_token) == {"active": False}
        assert introspect(w, access) == {"active": False}
        refused = refresh(w, grant.client_id, refresh_token)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
        # The protected server asks the provider about every token: the old one is out.
        with httpx.Client() as http:
            answer = http.post(
                w.opaque,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={
                    "authorization": f"Bearer {access}",
                    "accept": "application/json, text/event-stream",
                    "mcp-protocol-version": "2026-07-28",
                },
            )
        assert answer.status_code == 401
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]


@pytest.mark.slow
def test_oauth_revoke_reports_what_the_provider_could_not_revoke() -> None:
    with world() as w:
        storage = InMemoryTokenStorage()
        auth = OAuth(redirect=ScriptedLogin("bob"), storage=storage)
        grant = run(auth.login(w.jwt))
        assert grant.access_token and grant.access_token.count(".") == 2  # a JWT
        assert grant.refresh_token

        revocation = run(auth.revoke())
        assert revocation.issuer == w.issuer and revocation.resource == w.jwt
        assert revocation.offered and revocation.revoked == ("refresh_token",)
        assert not revocation.complete
        (why,) = revocation.failed.values()
        assert list(revocation.failed) == ["access_token"]
        assert "unsupported_token_type" in why and grant.access_token not in why

        assert introspect(w, grant.refresh_token) == {"active": False}
        assert refresh(w, grant.client_id, grant.refresh_token).status_code == 400
        # Kept without tokens: the registration serves the next login.
        kept = run(storage.load(w.issuer, w.jwt))
        assert kept is not None and kept.client_id == grant.client_id
        assert kept.access_token is None and kept.refresh_token is None
        assert auth.grant is not None and auth.grant.refresh_token is None
