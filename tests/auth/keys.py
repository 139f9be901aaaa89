"""Signing keys, tokens and a JWKS endpoint for the authorization tests."""

from __future__ import annotations

import time
from typing import Any

import httpx
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

ISSUER = "https://issuer.example"
RESOURCE = "https://api.example/mcp"
JWKS_URI = "https://issuer.example/jwks"


def ec_key(kid: str) -> ECKey:
    return ECKey.generate_key("P-256", parameters={"kid": kid, "alg": "ES256"})


def sign(key: ECKey, **claims: Any) -> str:
    """An ES256 token with sensible claims, any of which `claims` overrides (None: left out)."""
    now = int(time.time())
    body: dict[str, Any] = {
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "client_id": "app",
        "scope": "read write",
        "iat": now,
        "exp": now + 300,
    }
    body.update(claims)
    body = {k: v for k, v in body.items() if v is not None}
    return jwt.encode({"alg": "ES256", "kid": key.kid}, body, key)


class Jwks:
    """A JWKS endpoint (for httpx.MockTransport) that counts its requests and can fail."""

    def __init__(self, *keys: ECKey, cache_control: str | None = "max-age=600") -> None:
        self.keys = list(keys)
        self.cache_control = cache_control
        self.down = False
        self.hits = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.hits += 1
        if self.down:
            return httpx.Response(503, text="down")
        headers = {} if self.cache_control is None else {"cache-control": self.cache_control}
        return httpx.Response(200, json=KeySet(self.keys).as_dict(), headers=headers)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))
