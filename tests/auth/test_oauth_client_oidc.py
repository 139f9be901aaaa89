"""The OAuth client against a real OpenID provider (npm oidc-provider, started on
loopback): dynamic registration, PKCE, the resource indicator giving a JWT access
token for our server, the login and consent pages completed by a script, the token
verified through the provider's JWKS by the protected server, refresh, and a stored
grant used by a new client without logging in again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from mcpgen import Client, Server
from mcpgen.auth import FileTokenStorage, OAuth
from tests.auth.oidc import NoLogin, ScriptedLogin, provider
from tests.transports.httpharness import running

pytestmark = pytest.mark.needs_node


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


class JwtProtected:
    """An mcpgen server behind a JWT check (issuer, audience, expiry, signature by the
    provider's JWKS), serving its protected resource metadata."""

    def __init__(self) -> None:
        server = Server("oidc-guarded")

        @server.tool
        def whoami() -> str:
            """Says hello."""
            return "hello"

        self.app = server.asgi_app()
        self.issuer = self.resource = ""
        self.keys: KeySet | None = None
        self.subjects: list[str] = []

    def verify(self, header: str) -> bool:
        if not header.startswith("Bearer "):
            return False
        if self.keys is None:
            jwks_uri = httpx.get(f"{self.issuer}/.well-known/openid-configuration").json()
            self.keys = KeySet.import_key_set(httpx.get(jwks_uri["jwks_uri"]).json())
        try:
            token = jwt.decode(header[7:], self.keys)
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": self.issuer},
                aud={"essential": True, "value": self.resource},
                exp={"essential": True},
            ).validate(token.claims)
        except (JoseError, ValueError):
            return False
        self.subjects.append(str(token.claims["sub"]))
        return True

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/.well-known/"):
            body = (
                f'{{"resource": "{self.resource}", "authorization_servers": ["{self.issuer}"],'
                ' "scopes_supported": ["mcp:tools"]}'
            ).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            if not self.verify(headers.get("authorization", "")):
                challenge = b'Bearer error="invalid_token"'
                start = {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", challenge)],
                }
                await send(start)
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


@contextmanager
def protected_server() -> Iterator[JwtProtected]:
    app = JwtProtected()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", loop="asyncio", lifespan="off"
    )
    with running(uvicorn.Server(config)) as base:
        app.resource = f"{base}/mcp"
        with provider(app.resource) as issuer:
            app.issuer = issuer
            yield app


@pytest.mark.slow
def test_a_real_openid_provider_end_to_end(tmp_path: Path) -> None:
    with protected_server() as app:
        login = ScriptedLogin()
        auth = OAuth(redirect=login, storage=FileTokenStorage(tmp_path), client_name="e2e")

        async def call(oauth: OAuth) -> str:
            async with Client.http(app.resource, era="modern", auth=oauth, timeout=20) as c:
                result = await c.call_tool("whoami", {})
                return str(result.content[0].text)

        assert run(call(auth)) == "hello"
        grant = auth.grant
        assert grant is not None and grant.refresh_token is not None
        assert grant.scope is not None and "mcp:tools" in grant.scope.split()
        assert grant.client_id and grant.issuer == app.issuer and grant.resource == app.resource
        assert app.subjects and set(app.subjects) == {"alice"}

        # Expired: the next request refreshes (no login) and the new token is accepted.
        first = grant.access_token
        grant.expires_at = time.time() - 1
        assert run(call(auth)) == "hello"
        assert auth.grant is not None and auth.grant.access_token != first
        assert login.logins == 1

        # A new process with the same storage: no login at all.
        again = OAuth(redirect=NoLogin(), storage=FileTokenStorage(tmp_path))
        assert run(call(again)) == "hello"
