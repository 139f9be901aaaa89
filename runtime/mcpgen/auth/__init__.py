"""OAuth 2.1 authorization for MCP over HTTP.

Server side (a protected resource, RFC 9728): `AuthSettings` given to
`server.asgi_app(auth=...)`, a `TokenVerifier` (`JWTVerifier`, `IntrospectionVerifier`,
`StaticTokenVerifier`, or your own), `DPoP` for tokens bound to a client's key
(RFC 9449) and the `AccessToken` handlers see as `ctx.auth`.

Client side: `OAuth` (authorization code + PKCE for a user) and `ClientCredentials`
(a machine client) are `httpx.Auth` flows for `Client.http(url, auth=...)`; grants are
kept in a `TokenStorage` (`InMemoryTokenStorage`, `FileTokenStorage`) and ended with
their `revoke` and `logout` (a `Revocation` each); the user's approval comes back
through a `RedirectHandler` (`LoopbackRedirect` with a browser, `HeadlessRedirect`
without).

The verifiers and the client flows need the `auth` extra (joserfc, httpx). Every name
is loaded on first use, so importing this package (or the HTTP app) imports neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpgen.auth._backoff import VerifierUnavailableError
    from mcpgen.auth._client import OAuth
    from mcpgen.auth._client_base import OAuthBase, Revocation
    from mcpgen.auth._client_credentials import ClientCredentials
    from mcpgen.auth._client_redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler
    from mcpgen.auth._discovery import AuthorizationError
    from mcpgen.auth._dpop import DPoP
    from mcpgen.auth._introspection import IntrospectionVerifier
    from mcpgen.auth._jwt import JWTVerifier
    from mcpgen.auth._metadata import AuthSettings
    from mcpgen.auth._storage import FileTokenStorage, Grant, InMemoryTokenStorage, TokenStorage
    from mcpgen.auth._tokens import AccessToken, StaticTokenVerifier, TokenCache, TokenVerifier

# Public name -> the module of this package that defines it.
_SERVER = {
    "AccessToken": "_tokens",
    "AuthSettings": "_metadata",
    "DPoP": "_dpop",
    "IntrospectionVerifier": "_introspection",
    "JWTVerifier": "_jwt",
    "StaticTokenVerifier": "_tokens",
    "TokenCache": "_tokens",
    "TokenVerifier": "_tokens",
    "VerifierUnavailableError": "_backoff",
}
_CLIENT = {
    "AuthorizationError": "_discovery",
    "ClientCredentials": "_client_credentials",
    "FileTokenStorage": "_storage",
    "Grant": "_storage",
    "HeadlessRedirect": "_client_redirect",
    "InMemoryTokenStorage": "_storage",
    "LoopbackRedirect": "_client_redirect",
    "OAuth": "_client",
    "OAuthBase": "_client_base",
    "RedirectHandler": "_client_redirect",
    "Revocation": "_client_base",
    "TokenStorage": "_storage",
}
_MODULES = {**_SERVER, **_CLIENT}

__all__ = [
    "AccessToken",
    "AuthSettings",
    "AuthorizationError",
    "ClientCredentials",
    "DPoP",
    "FileTokenStorage",
    "Grant",
    "HeadlessRedirect",
    "InMemoryTokenStorage",
    "IntrospectionVerifier",
    "JWTVerifier",
    "LoopbackRedirect",
    "OAuth",
    "OAuthBase",
    "RedirectHandler",
    "Revocation",
    "StaticTokenVerifier",
    "TokenCache",
    "TokenStorage",
    "TokenVerifier",
    "VerifierUnavailableError",
]


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgen.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcpgen.auth.{module}"), name)
    globals()[name] = value
    return value
