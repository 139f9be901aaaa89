"""OAuth 2.1 authorization for MCP over HTTP.

Server side (a protected resource, RFC 9728): `AuthSettings` given to
`server.asgi_app(auth=...)`, a `TokenVerifier` (`JWTVerifier`, `IntrospectionVerifier`,
`StaticTokenVerifier`, or your own) and the `AccessToken` handlers see as `ctx.auth`.
`JWTVerifier` and `IntrospectionVerifier` need the `auth` extra (joserfc, httpx).

Every name is loaded on first use, so importing this package (or the HTTP app)
imports neither joserfc nor httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpgen.auth._introspection import IntrospectionVerifier
    from mcpgen.auth._jwt import JWTVerifier
    from mcpgen.auth._metadata import AuthSettings
    from mcpgen.auth._tokens import AccessToken, StaticTokenVerifier, TokenCache, TokenVerifier

_SERVER = {
    "AccessToken": "_tokens",
    "AuthSettings": "_metadata",
    "IntrospectionVerifier": "_introspection",
    "JWTVerifier": "_jwt",
    "StaticTokenVerifier": "_tokens",
    "TokenCache": "_tokens",
    "TokenVerifier": "_tokens",
}

__all__ = [
    "AccessToken",
    "AuthSettings",
    "IntrospectionVerifier",
    "JWTVerifier",
    "StaticTokenVerifier",
    "TokenCache",
    "TokenVerifier",
]


def __getattr__(name: str) -> object:
    module = _SERVER.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgen.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcpgen.auth.{module}"), name)
    globals()[name] = value
    return value
