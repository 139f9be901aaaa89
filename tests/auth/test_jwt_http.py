"""End to end over real sockets: a JWKS served by a tiny HTTP server on 127.0.0.1, a
protected mcpgen server verifying JWTs with it, and mcpgen's client calling tools
with a bearer token. Also: the verified-token cache of the gate."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from joserfc.jwk import KeySet

from mcpgen import Client, Context, Server
from mcpgen.auth import AccessToken, AuthSettings, JWTVerifier
from tests.auth.keys import ISSUER, ec_key, sign
from tests.transports.httpharness import body, modern_headers, running, serve


class JwksApp:
    """An ASGI app serving one key set, counting requests; `down` answers 503."""

    def __init__(self, keys: KeySet) -> None:
        self.keys = keys
        self.hits = 0
        self.down = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hits += 1
        status, payload = (
            (503, b"{}") if self.down else (200, json.dumps(self.keys.as_dict()).encode())
        )
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"max-age=300")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def build() -> Server:
    server = Server("protected")

    @server.tool
    def whoami(ctx: Context) -> str:
        return ctx.auth.subject if ctx.auth and ctx.auth.subject else "nobody"

    return server


@pytest.fixture
def jwks() -> Iterator[tuple[str, JwksApp]]:
    key = ec_key("k1")
    app = JwksApp(KeySet([key]))
    app.key = key  # type: ignore[attr-defined]
    config = uvicorn.Config(
        app, "127.0.0.1", 0, log_level="warning", loop="asyncio", lifespan="off"
    )
    with running(uvicorn.Server(config)) as base:
        yield f"{base}/jwks", app


def test_a_jwt_verified_through_a_real_jwks(jwks: tuple[str, JwksApp]) -> None:
    jwks_uri, keys = jwks
    key = keys.key  # type: ignore[attr-defined]
    verifier = JWTVerifier(issuer=ISSUER, jwks_uri=jwks_uri)
    with serve(
        build().asgi_app(auth=AuthSettings(verifier, resource="https://api.example/mcp"))
    ) as (url, _):
        token = sign(key)  # aud https://api.example/mcp: the resource given above

        async def scenario() -> str:
            async with Client.http(url, headers={"authorization": f"Bearer {token}"}) as client:
                result = await client.call_tool("whoami")
                return result.content[0].text  # type: ignore[union-attr,no-any-return]

        assert asyncio.run(scenario()) == "alice"
        assert keys.hits == 1
        wrong = sign(key, aud="https://api.example/mcp/")  # a trailing slash is another resource
        response = httpx.post(
            url,
            headers=modern_headers("tools/list") | {"authorization": f"Bearer {wrong}"},
            content=body(1, "tools/list"),
            timeout=10,
        )
        assert response.status_code == 401
        assert (
            'error_description="the token was issued for another resource"'
            in response.headers["www-authenticate"]
        )


def test_a_jwks_that_is_down_gives_401_with_a_description(jwks: tuple[str, JwksApp]) -> None:
    jwks_uri, keys = jwks
    keys.down = True
    verifier = JWTVerifier(issuer=ISSUER, jwks_uri=jwks_uri)
    with serve(
        build().asgi_app(auth=AuthSettings(verifier, resource="https://api.example/mcp"))
    ) as (url, _):
        for _ in range(2):  # and the server goes on serving
            response = httpx.post(
                url,
                headers=modern_headers("tools/list")
                | {"authorization": f"Bearer {sign(keys.key)}"},  # type: ignore[attr-defined]
                content=body(1, "tools/list"),
                timeout=10,
            )
            assert response.status_code == 401
            assert "signing keys are unavailable" in response.headers["www-authenticate"]


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    async def verify(self, token: str) -> AccessToken | None:
        self.calls += 1
        if token == "expiring":
            return AccessToken(subject="e", expires_at=time.time() + 0.3)
        if token == "nameless":
            return AccessToken(scopes=frozenset({"read"}))
        return AccessToken(subject="u") if token == "good" else None


def test_verified_tokens_are_cached_until_exp() -> None:
    counting = Counting()
    with serve(build().asgi_app(auth=AuthSettings(counting))) as (url, _):

        def ask(token: str) -> int:
            headers = modern_headers("tools/list") | {"authorization": f"Bearer {token}"}
            return httpx.post(
                url, headers=headers, content=body(1, "tools/list"), timeout=10
            ).status_code

        assert [ask("good") for _ in range(3)] == [200, 200, 200]
        assert counting.calls == 1
        assert [ask("bad") for _ in range(2)] == [401, 401]
        assert counting.calls == 3  # refusals are not cached
        assert ask("expiring") == 200 and ask("expiring") == 200
        assert counting.calls == 4
        time.sleep(0.35)
        ask("expiring")
        assert counting.calls == 5  # past its exp: verified again
        # A token that names nobody could not own sessions or tasks: refused.
        assert ask("nameless") == 401


def test_the_protected_server_example(jwks: tuple[str, JwksApp]) -> None:
    """examples/protected_server.py as a process, with its documented options."""
    import socket
    import subprocess
    import sys
    from pathlib import Path

    jwks_uri, keys = jwks
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    script = Path(__file__).resolve().parents[2] / "examples" / "protected_server.py"
    argv = [sys.executable, str(script), "--port", str(port), "--issuer", ISSUER]
    process = subprocess.Popen([*argv, "--jwks-uri", jwks_uri, "--resource", url])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                doc = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the example did not start"
                time.sleep(0.1)
        assert doc.json()["resource"] == url
        assert doc.json()["authorization_servers"] == [ISSUER]
        key = keys.key  # type: ignore[attr-defined]

        async def call(token: str, tool: str) -> str:
            async with Client.http(url, headers={"authorization": f"Bearer {token}"}) as client:
                result = await client.call_tool(tool)
                return result.content[0].text  # type: ignore[union-attr,no-any-return]

        assert asyncio.run(call(sign(key, aud=url), "whoami")) == "alice"
        admin = sign(key, aud=url, scope="admin")
        assert asyncio.run(call(admin, "admin_only")) == "admin access granted"
        headers = modern_headers("tools/call", "admin_only")
        headers["authorization"] = f"Bearer {sign(key, aud=url)}"
        refused = httpx.post(
            url, headers=headers, content=body(1, "tools/call", {"name": "admin_only"})
        )
        assert refused.status_code == 403
        assert 'scope="admin read write"' in refused.headers["www-authenticate"]
    finally:
        process.terminate()
        process.wait(10)


class Crashing:
    async def verify(self, token: str) -> AccessToken | None:
        if token == "boom":
            raise RuntimeError("verifier bug")
        return None


def test_a_plain_verifier_gets_a_generic_description_and_a_crash_is_a_401(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with serve(build().asgi_app(auth=AuthSettings(Crashing()))) as (url, _):

        def ask(token: str) -> httpx.Response:
            headers = modern_headers("tools/list") | {"authorization": f"Bearer {token}"}
            return httpx.post(url, headers=headers, content=body(1, "tools/list"), timeout=10)

        refused = ask("nope")
        assert refused.status_code == 401
        assert (
            'error_description="the token is invalid or expired"'
            in refused.headers["www-authenticate"]
        )
        crashed = ask("boom")
        assert crashed.status_code == 401
        assert "could not be verified" in crashed.headers["www-authenticate"]
        assert "the token verifier failed" in caplog.text  # with its traceback
        assert ask("nope").status_code == 401  # still serving


class IntrospectionApp:
    """An RFC 7662 endpoint on a real socket: `live` tokens are active; the resource
    server must authenticate with HTTP Basic as rs:rs-secret."""

    def __init__(self) -> None:
        self.live = {"opaque-1": {"active": True, "sub": "carol", "scope": "read"}}
        self.asked = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.asked += 1
        form = (await receive())["body"].decode()
        token = dict(part.split("=", 1) for part in form.split("&"))["token"]
        auth = dict(scope["headers"]).get(b"authorization", b"")
        expected = b"Basic " + base64.b64encode(b"rs:rs-secret")
        answer = self.live.get(token, {"active": False}) if auth == expected else {"active": False}
        payload = json.dumps(answer).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


def test_opaque_tokens_through_a_real_introspection_endpoint() -> None:
    from mcpgen.auth import IntrospectionVerifier

    endpoint = IntrospectionApp()
    config = uvicorn.Config(
        endpoint, "127.0.0.1", 0, log_level="warning", loop="asyncio", lifespan="off"
    )
    with running(uvicorn.Server(config)) as base:
        verifier = IntrospectionVerifier(
            f"{base}/introspect", client_id="rs", client_secret="rs-secret"
        )
        with serve(build().asgi_app(auth=AuthSettings(verifier))) as (url, _):

            async def whoami(token: str) -> str:
                headers = {"authorization": f"Bearer {token}"}
                async with Client.http(url, headers=headers, era="modern") as client:
                    result = await client.call_tool("whoami")
                    return result.content[0].text  # type: ignore[union-attr,no-any-return]

            assert asyncio.run(whoami("opaque-1")) == "carol"
            assert asyncio.run(whoami("opaque-1")) == "carol"
            assert endpoint.asked == 1  # cached after the first answer
            headers = modern_headers("tools/list") | {"authorization": "Bearer revoked"}
            refused = httpx.post(url, headers=headers, content=body(1, "tools/list"), timeout=10)
            assert refused.status_code == 401
            assert "the token is not active" in refused.headers["www-authenticate"]
