"""The acceptance test of authorization, end to end against a real OpenID provider
(npm oidc-provider, pinned, on loopback): dynamic registration, PKCE, resource
indicators, JWT access tokens for one resource and opaque ones for another.

`examples/protected_server.py` runs as a process twice: once checking JWTs with
`JWTVerifier` against the provider's JWKS, once checking opaque tokens with
`IntrospectionVerifier` at the provider's introspection endpoint. Our `OAuth` client
(the provider's login and consent pages played by `ScriptedLogin`) gets a token,
`whoami` returns the subject, `admin_only` triggers step-up (403 insufficient_scope,
authorize again with the union of scopes) and then succeeds, an expired token is
refused by the server and refreshed by the client without a new login."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen import Client
from mcpgen.auth import FileTokenStorage, InMemoryTokenStorage, OAuth
from tests.auth.oidc import INTROSPECTOR, ScriptedLogin, provider
from tests.processes import free_port, stop
from tests.transports.httpharness import body, modern_headers

pytestmark = pytest.mark.needs_node

EXAMPLE = Path(__file__).parents[2] / "examples" / "protected_server.py"
TTL = 8  # seconds an access token lives: short, so that the test sees one expire


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


@contextmanager
def example(port: int, log: Path, *options: str) -> Iterator[subprocess.Popen[bytes]]:
    """examples/protected_server.py on 127.0.0.1:`port`, once it serves its metadata."""
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--port", str(port), *options],
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        metadata = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                if httpx.get(metadata, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the example did not start"
            time.sleep(0.1)
        yield process
    finally:
        stop(process)


@dataclass
class World:
    issuer: str
    jwt_resource: str  # checked by JWTVerifier
    opaque_resource: str  # checked by IntrospectionVerifier


@contextmanager
def world(logs: Path) -> Iterator[World]:
    ports = free_port(), free_port()
    jwt_resource, opaque_resource = (f"http://127.0.0.1:{p}/mcp" for p in ports)
    with ExitStack() as stack:
        issuer = stack.enter_context(provider(jwt_resource, ttl=TTL, opaque=opaque_resource))
        config = httpx.get(f"{issuer}/.well-known/openid-configuration").json()
        common = ("--issuer", issuer, "--required-scope", "mcp:tools")
        stack.enter_context(
            example(
                ports[0],
                logs / "jwt.log",
                *common,
                *("--resource", jwt_resource, "--jwks-uri", config["jwks_uri"]),
                *("--leeway", "0"),
            )
        )
        stack.enter_context(
            example(
                ports[1],
                logs / "introspection.log",
                *common,
                *("--resource", opaque_resource),
                *("--introspection-endpoint", config["introspection_endpoint"]),
                *("--client-id", INTROSPECTOR[0], "--client-secret", INTROSPECTOR[1]),
            )
        )
        yield World(issuer, jwt_resource, opaque_resource)


def header_of(token: str) -> dict[str, Any]:
    head = token.split(".", maxsplit=1)[0]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    return decoded


async def call(url: str, auth: OAuth, *tools: str) -> list[str]:
    async with Client.http(url, auth=auth, timeout=30) as client:
        return [str((await client.call_tool(t)).content[0].text) for t in tools]  # type: ignore[union-attr]


async def post(url: str, token: str | None) -> httpx.Response:
    """A modern tools/list, by hand (to show what the server itself answers)."""
    headers = modern_headers("tools/list")
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as http:
        return await http.post(url, content=body(1, "tools/list"), headers=headers)


@pytest.mark.slow
def test_against_a_real_openid_provider(tmp_path: Path) -> None:
    with world(tmp_path) as w:
        # No token: 401 naming the metadata and the scope every request needs.
        refused = run(post(w.jwt_resource, None))
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert 'scope="mcp:tools"' in challenge and "resource_metadata=" in challenge

        # Login (registration, PKCE, resource indicator), whoami, then step-up.
        login = ScriptedLogin("alice")
        auth = OAuth(redirect=login, storage=FileTokenStorage(tmp_path / "grants"))
        assert run(call(w.jwt_resource, auth, "whoami", "admin_only")) == [
            "alice",
            "admin access granted",
        ]
        assert login.logins == 2, login.scopes
        first, second = (set(s.split()) for s in login.scopes)
        assert first == {"mcp:tools", "offline_access"}
        assert second == {"mcp:tools", "offline_access", "admin"}
        grant = auth.grant
        assert grant is not None and grant.access_token and grant.refresh_token
        assert grant.issuer == w.issuer and grant.resource == w.jwt_resource
        assert header_of(grant.access_token)["typ"] == "at+jwt"
        assert grant.scope is not None and "admin" in grant.scope.split()

        # Expiry: the server refuses the old token; the client refreshes, no login.
        old = grant.access_token
        assert grant.expires_at is not None
        time.sleep(max(0.0, grant.expires_at - time.time()) + 1.5)
        expired = run(post(w.jwt_resource, old))
        assert expired.status_code == 401
        assert 'error="invalid_token"' in expired.headers["www-authenticate"]
        assert "expired" in expired.headers["www-authenticate"]
        assert run(call(w.jwt_resource, auth, "whoami")) == ["alice"]
        assert auth.grant is not None and auth.grant.access_token != old
        assert login.logins == 2

        # Introspection: opaque tokens for the other resource, checked at the provider.
        bob = ScriptedLogin("bob")
        opaque = OAuth(redirect=bob, storage=InMemoryTokenStorage())
        assert run(call(w.opaque_resource, opaque, "whoami")) == ["bob"]
        assert opaque.grant is not None and opaque.grant.access_token
        token = opaque.grant.access_token
        assert token.count(".") != 2  # not a JWT
        # Each server accepts only its own kind of token.
        listed = run(post(w.opaque_resource, token))
        assert listed.status_code == 200 and "whoami" in listed.text, listed.text
        assert run(post(w.jwt_resource, token)).status_code == 401
        assert run(post(w.opaque_resource, auth.grant.access_token)).status_code == 401
