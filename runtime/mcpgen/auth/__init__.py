"""Authorization for MCP over HTTP (OAuth 2.1 bearer tokens).

Server side (a protected resource, RFC 9728): `AuthSettings` given to
`server.asgi_app(auth=...)`, a `TokenVerifier` (`JWTVerifier`, `IntrospectionVerifier`,
`StaticTokenVerifier`) and the `AccessToken` handlers see as `ctx.auth`.

Importing this package imports neither joserfc nor httpx: `JWTVerifier` and
`IntrospectionVerifier` are loaded on first use (they need the `auth` extra).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpgen.auth._metadata import AuthSettings
from mcpgen.auth._tokens import AccessToken, StaticTokenVerifier, TokenCache, TokenVerifier

if TYPE_CHECKING:
    from mcpgen.auth._introspection import IntrospectionVerifier
    from mcpgen.auth._jwt import JWTVerifier

__all__ = [
    "AccessToken",
    "AuthSettings",
    "IntrospectionVerifier",
    "JWTVerifier",
    "StaticTokenVerifier",
    "TokenCache",
    "TokenVerifier",
]

# Names whose modules need the `auth` extra, imported when first asked for.
_LAZY = {
    "IntrospectionVerifier": "mcpgen.auth._introspection",
    "JWTVerifier": "mcpgen.auth._jwt",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgen.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
