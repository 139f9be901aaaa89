"""OAuth 2.1 authorization for MCP over HTTP.

Client side: `OAuth` (authorization code + PKCE for a user) and `ClientCredentials`
(a machine client) are `httpx.Auth` flows for `Client.http(url, auth=...)`; grants are
kept in a `TokenStorage` (`InMemoryTokenStorage`, `FileTokenStorage`); the user's
approval comes back through a `RedirectHandler` (`LoopbackRedirect` with a browser,
`HeadlessRedirect` without). Needs the `auth` extra (httpx, joserfc).

The client names are loaded on first use, so importing a server-side module of this
package never imports httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpgen.auth._client import OAuth
    from mcpgen.auth._client_base import OAuthBase
    from mcpgen.auth._client_credentials import ClientCredentials
    from mcpgen.auth._client_redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler
    from mcpgen.auth._discovery import AuthorizationError
    from mcpgen.auth._storage import FileTokenStorage, Grant, InMemoryTokenStorage, TokenStorage

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
    "TokenStorage": "_storage",
}

__all__ = [
    "AuthorizationError",
    "ClientCredentials",
    "FileTokenStorage",
    "Grant",
    "HeadlessRedirect",
    "InMemoryTokenStorage",
    "LoopbackRedirect",
    "OAuth",
    "OAuthBase",
    "RedirectHandler",
    "TokenStorage",
]


def __getattr__(name: str) -> object:
    module = _CLIENT.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgen.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcpgen.auth.{module}"), name)
    globals()[name] = value
    return value
