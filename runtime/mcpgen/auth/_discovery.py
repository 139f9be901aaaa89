"""What a client learns before it can authorize: the challenge of a 401/403, the
protected resource metadata (RFC 9728) and the authorization server's metadata
(RFC 8414 / OpenID discovery), each fetched from the URLs, and in the order, the MCP
authorization spec gives.

Identifiers are compared as strings: no URL parser rewrites them (a parser adding a
`/` to a path-less URL is how `resource` and `issuer` checks go wrong).
"""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import msgspec

from mcpgen._errors import TransportError

if TYPE_CHECKING:
    import httpx

_T = TypeVar("_T")

__all__ = [
    "AuthorizationError",
    "Challenge",
    "ResourceMetadata",
    "ServerMetadata",
    "fetch_resource_metadata",
    "fetch_server_metadata",
    "parse_challenge",
    "require_secure",
    "resource_covers",
]


class AuthorizationError(TransportError):
    """OAuth authorization could not be completed: discovery, registration, the
    authorization response or the token endpoint failed, or the server answered
    something the client must refuse (a mismatched issuer or resource, a foreign
    `state`, a plain-HTTP endpoint)."""


class ResourceMetadata(msgspec.Struct, kw_only=True):
    """RFC 9728 protected resource metadata (the fields a client uses)."""

    resource: str
    authorization_servers: list[str] = msgspec.field(default_factory=list)
    scopes_supported: list[str] | None = None


class ServerMetadata(msgspec.Struct, kw_only=True):
    """RFC 8414 authorization server metadata (the fields a client uses)."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    authorization_response_iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    dpop_signing_alg_values_supported: list[str] | None = None
    revocation_endpoint: str | None = None


class Challenge(msgspec.Struct, frozen=True):
    """The Bearer challenge of a `WWW-Authenticate` header (its parameters)."""

    error: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None

    @property
    def scopes(self) -> list[str]:
        return self.scope.split() if self.scope else []


_PARAM = re.compile(r'([A-Za-z0-9_!#$%&\'*+.^`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)')
_BEARER = re.compile(r"(?:^|,)\s*(?:bearer|dpop)(?=\s|$)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]")


def parse_challenge(headers: httpx.Headers) -> Challenge:
    """The Bearer (or DPoP) challenge among the response's `WWW-Authenticate` values
    (an empty Challenge when there is none)."""
    for value in headers.get_list("www-authenticate"):
        found = _BEARER.search(value)
        if found is None:
            continue
        params: dict[str, str] = {}
        position = found.end()
        for match in _PARAM.finditer(value, position):
            if _WORD.search(value, position, match.start()):
                break  # a bare token between parameters: the next scheme's challenge
            name, raw = match.groups()
            text = raw[1:-1].replace('\\"', '"').replace("\\\\", "\\") if raw[:1] == '"' else raw
            params.setdefault(name.lower(), text)
            position = match.end()
        return Challenge(params.get("error"), params.get("scope"), params.get("resource_metadata"))
    return Challenge()


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether a PRM `resource` names `server_url`: the same string, or a prefix of it
    that ends at a path-segment boundary (a resource at the origin covers its MCP
    endpoint). No normalisation: `https://a/mcp/` does not cover `https://a/mcp`."""
    url = server_url.split("#", 1)[0]
    if url == resource:
        return True
    if not url.startswith(resource) or urlsplit(resource).query:
        return False
    return resource.endswith("/") or url[len(resource)] in "/?"


def loopback_host(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure(url: str, what: str) -> None:
    """Refuse an authorization-server endpoint that is not HTTPS (loopback excepted:
    local development and tests)."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and loopback_host(parts.hostname or "")):
        return
    raise AuthorizationError(f"refusing the {what} {url!r}: not HTTPS")


def resource_metadata_urls(server_url: str, linked: str | None) -> list[str]:
    """Where the PRM may be, in order: the `resource_metadata` of the challenge, the
    path-based well-known URL, the root one."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    urls = [linked] if linked else []
    path = parts.path.rstrip("/")
    if path:
        urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{origin}/.well-known/oauth-protected-resource")
    return urls


def server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the spec's order: RFC 8414 path insertion,
    OpenID discovery with the path inserted, then with it appended."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


async def _get_json(http: httpx.AsyncClient, url: str, kind: type[_T]) -> _T | None:
    """`kind` from a 200 JSON answer at `url`; None for any other answer (the next
    candidate URL is tried)."""
    import httpx  # noqa: PLC0415 (loaded already: `http` is an httpx client)

    try:
        response = await http.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    try:
        return msgspec.json.decode(response.content, type=kind)
    except msgspec.DecodeError:
        return None


async def fetch_resource_metadata(
    http: httpx.AsyncClient, server_url: str, linked: str | None
) -> ResourceMetadata | None:
    """The server's PRM (`linked`: the URL a challenge named), or None when no
    candidate URL serves one. A PRM whose
    `resource` does not cover `server_url` is refused (it would make the client ask
    for tokens meant for another resource)."""
    for url in resource_metadata_urls(server_url, linked):
        metadata = await _get_json(http, url, ResourceMetadata)
        if metadata is None:
            continue
        if not resource_covers(metadata.resource, server_url):
            raise AuthorizationError(
                f"the protected resource metadata at {url} names the resource"
                f" {metadata.resource!r}, not {server_url!r}"
            )
        return metadata
    return None


async def fetch_server_metadata(http: httpx.AsyncClient, issuer: str) -> ServerMetadata:
    """The metadata of the authorization server `issuer`, whose `issuer` must be that
    exact string (RFC 8414 section 3.3)."""
    for url in server_metadata_urls(issuer):
        metadata = await _get_json(http, url, ServerMetadata)
        if metadata is None:
            continue
        if metadata.issuer != issuer:
            raise AuthorizationError(
                f"the authorization server metadata at {url} names the issuer"
                f" {metadata.issuer!r}, not {issuer!r}"
            )
        for what in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            endpoint = getattr(metadata, what)
            if endpoint is not None:
                require_secure(endpoint, what.replace("_", " "))
        return metadata
    raise AuthorizationError(f"no authorization server metadata found for {issuer!r}")
