"""OAuth 2.1 authorization for MCP over HTTP.

Client side: `OAuth` (authorization code + PKCE for a user) and `ClientCredentials`
(a machine client) are `httpx.Auth` flows for `Client.http(url, auth=...)`; grants are
kept in a `TokenStorage` (`InMemoryTokenStorage`, `FileTokenStorage`); the user's
approval comes back through a `RedirectHandler` (`LoopbackRedirect` with a browser,
`HeadlessRedirect` without). Needs the `auth` extra (httpx, joserfc).
"""

from __future__ import annotations

from mcpgen.auth._client import OAuth
from mcpgen.auth._client_base import OAuthBase
from mcpgen.auth._client_credentials import ClientCredentials
from mcpgen.auth._client_redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler
from mcpgen.auth._discovery import AuthorizationError
from mcpgen.auth._storage import FileTokenStorage, Grant, InMemoryTokenStorage, TokenStorage

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
