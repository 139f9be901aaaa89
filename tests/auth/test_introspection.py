"""IntrospectionVerifier (RFC 7662) against a local endpoint, the static verifier and
the token cache."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import time
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from mcpgen import ConfigurationError
from mcpgen.auth import (
    AccessToken,
    IntrospectionVerifier,
    StaticTokenVerifier,
    TokenCache,
    VerifierUnavailableError,
)

ENDPOINT = "https://issuer.example/introspect"


class Introspection:
    """An introspection endpoint: knows some tokens, checks the caller's credentials."""

    def __init__(self, tokens: dict[str, dict[str, Any]]) -> None:
        self.tokens = tokens
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        basic = request.headers.get("authorization", "")
        if basic.startswith("Basic "):
            client, _, secret = base64.b64decode(basic[6:]).decode().partition(":")
        else:
            client, secret = form.get("client_id", ""), form.get("client_secret", "")
        if (client, secret) != ("rs", "rs-secret"):
            return httpx.Response(401, json={"error": "invalid_client"})
        return httpx.Response(200, json=self.tokens.get(form["token"], {"active": False}))

    def verifier(self, **options: Any) -> IntrospectionVerifier:
        client = httpx.AsyncClient(transport=httpx.MockTransport(self))
        options.setdefault("client_id", "rs")
        options.setdefault("client_secret", "rs-secret")
        return IntrospectionVerifier(ENDPOINT, http=client, **options)


def active(**claims: Any) -> dict[str, Any]:
    return {"active": True, "sub": "alice", "client_id": "app", "scope": "read", **claims}


@pytest.mark.parametrize("method", ["basic", "post"])
def test_an_active_token_with_either_client_authentication(method: str) -> None:
    endpoint = Introspection({"t1": active(exp=time.time() + 60, aud="https://api.example/mcp")})
    v = endpoint.verifier(auth_method=method)
    found = asyncio.run(v.verify("t1"))
    assert isinstance(found, AccessToken)
    assert (found.subject, found.client_id, found.scopes) == ("alice", "app", {"read"})
    assert found.audience == ("https://api.example/mcp",)
    request = endpoint.seen[0]
    assert ("authorization" in request.headers) == (method == "basic")
    assert b"token_type_hint=access_token" in request.content


def test_inactive_unknown_expired_and_failing_answers_are_refused() -> None:
    endpoint = Introspection(
        {
            "off": {"active": False, "sub": "x"},
            "old": active(exp=time.time() - 5),
            "odd": active(active="yes"),
        }
    )
    v = endpoint.verifier()
    assert asyncio.run(v.check("off")) == "the token is not active"
    assert asyncio.run(v.check("nobody")) == "the token is not active"
    assert asyncio.run(v.check("old")) == "the token has expired"
    assert asyncio.run(v.check("odd")) == "the token is not active"
    wrong = endpoint.verifier(client_secret="wrong")
    with pytest.raises(VerifierUnavailableError):  # the endpoint refused us: no token judged
        asyncio.run(wrong.verify("off"))
    assert asyncio.run(v.check("x" * 9000)) == "the token is too large"


def test_audience_and_issuer_checks() -> None:
    endpoint = Introspection(
        {"t": active(aud=["https://other.example"], iss="https://issuer.example")}
    )
    assert isinstance(asyncio.run(endpoint.verifier().check("t")), AccessToken)  # opt-in
    strict = endpoint.verifier(audience="https://api.example/mcp")
    assert asyncio.run(strict.check("t")) == "the token was issued for another resource"
    issuer = endpoint.verifier(issuer="https://evil.example")
    assert asyncio.run(issuer.check("t")) == "the token was issued by another authorization server"


def test_active_answers_are_cached_until_exp_and_bounded() -> None:
    now = [1000.0]
    endpoint = Introspection({f"t{i}": active(exp=1010) for i in range(5)})
    v = endpoint.verifier(cache_seconds=60, cache_size=3, clock=lambda: now[0])

    async def scenario() -> None:
        assert isinstance(await v.check("t0"), AccessToken)
        assert isinstance(await v.check("t0"), AccessToken)
        assert v.requests == 1
        now[0] = 1011  # past exp: asked again, and refused
        assert await v.check("t0") == "the token has expired"
        assert v.requests == 2
        now[0] = 1000
        for i in range(5):
            await v.check(f"t{i}")
        assert len(v.cache) == 3  # the size bound

    asyncio.run(scenario())


def test_refusals_are_not_cached_when_told_not_to() -> None:
    endpoint = Introspection({})
    v = endpoint.verifier(negative_cache_seconds=0)
    asyncio.run(v.check("t"))
    endpoint.tokens["t"] = active()
    assert isinstance(asyncio.run(v.check("t")), AccessToken)


def test_configuration_errors() -> None:
    with pytest.raises(ConfigurationError):
        IntrospectionVerifier(ENDPOINT, client_id="rs")
    with pytest.raises(ConfigurationError):
        IntrospectionVerifier(ENDPOINT, auth_method="jwt")  # type: ignore[arg-type]


def test_static_verifier_and_token_cache() -> None:
    now = [0.0]
    static = StaticTokenVerifier(
        {"dev": ["read"], "old": AccessToken(subject="x", expires_at=5.0)}, clock=lambda: now[0]
    )
    found = asyncio.run(static.verify("dev"))
    assert found == AccessToken(subject="dev", scopes=frozenset({"read"}))
    assert asyncio.run(static.check("nope")) == "unknown token"
    assert isinstance(asyncio.run(static.check("old")), AccessToken)
    now[0] = 6.0
    assert asyncio.run(static.check("old")) == "the token has expired"
    cache = TokenCache(ttl=10, max_size=2, clock=lambda: now[0])
    cache.put("a", AccessToken(subject="a", expires_at=8.0))
    cache.put("b", AccessToken(subject="b"))
    assert cache.get("a") is not None
    now[0] = 8.0
    assert cache.get("a") is None  # its exp came before the cache's ttl
    cache.put("c", AccessToken(subject="c"))
    cache.put("d", AccessToken(subject="d"))
    assert cache.get("b") is None and len(cache) == 2  # least recently used out


def test_importing_mcpgen_loads_neither_joserfc_nor_httpx() -> None:
    code = (
        "import sys, mcpgen, mcpgen.auth, mcpgen.transports._http\n"
        "from mcpgen.auth import AuthSettings, StaticTokenVerifier\n"
        "bad = [m for m in ('joserfc', 'httpx') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "from mcpgen.auth import JWTVerifier\n"
        "assert 'joserfc' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_concurrent_checks_of_a_new_token_ask_once() -> None:
    endpoint = Introspection({"t": active()})

    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.05)  # the answer takes a while: the others arrive meanwhile
        return endpoint(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(slow))
    v = IntrospectionVerifier(ENDPOINT, client_id="rs", client_secret="rs-secret", http=client)

    async def scenario() -> list[AccessToken | str]:
        return await asyncio.gather(*(v.check("t") for _ in range(8)))

    assert all(isinstance(r, AccessToken) for r in asyncio.run(scenario()))
    assert v.requests == 1
