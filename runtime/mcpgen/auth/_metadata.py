"""What a protected MCP server says about itself: `AuthSettings`, the protected
resource metadata document (RFC 9728) and the `WWW-Authenticate` challenges (RFC 6750).

Bearer-only mode: with no `authorization_servers` the document simply has none; the
server never makes up an issuer. A client then needs a token obtained out of band.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from urllib.parse import urlsplit

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen.auth._dpop import DPoP
from mcpgen.auth._tokens import TokenVerifier

if TYPE_CHECKING:
    from mcpgen.stores.redis import Connection

__all__ = ["WELL_KNOWN", "AuthSettings", "challenge", "metadata_url"]

WELL_KNOWN = "/.well-known/oauth-protected-resource"
# RFC 6750 section 3: the characters an error_description and a scope may carry.
_UNQUOTABLE = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")


@runtime_checkable
class _ResourceBound(Protocol):
    """A verifier that takes the resource URL as its default audience."""

    def bind_resource(self, resource: str) -> None: ...


class AuthSettings:
    """How an HTTP app protects its MCP endpoints: `server.asgi_app(auth=AuthSettings(...))`
    or `server.run("http", auth=...)`.

    `verifier` checks bearer tokens (`JWTVerifier`, `IntrospectionVerifier`,
    `StaticTokenVerifier` or your own `TokenVerifier`). `resource` is this server's
    public URL, exactly as clients use it (e.g. `https://api.example.com/mcp`); it is
    the `resource` of the metadata document and the default audience of JWT tokens.
    Without it, the URL is derived from each request (Host, mount point, path), and a
    `JWTVerifier` needs an explicit `audience`. `authorization_servers` lists the
    issuers clients may get tokens from (empty: bearer-only). `scopes_supported` is
    advertised; `required_scopes` are needed for every request. `cache_seconds` and
    `cache_size` bound the cache of verified tokens (a token stays cached until its
    `exp` at most; 0 turns the cache off). `hide_unauthorized` leaves out of
    `tools/list` and the other lists what the caller's token has not the scopes for.
    `dpop` configures DPoP (RFC 9449, `mcpgen.auth.DPoP`): proofs are checked for
    DPoP-bound tokens whether or not it is given; giving it advertises DPoP too.
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str | None = None,
        authorization_servers: Sequence[str] = (),
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] = (),
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        cache_seconds: float = 60.0,
        cache_size: int = 10_000,
        hide_unauthorized: bool = False,
        dpop: DPoP | None = None,
    ) -> None:
        if isinstance(authorization_servers, str):
            raise ConfigurationError("authorization_servers is a list of issuer URLs")
        if resource is not None and urlsplit(resource).scheme not in ("http", "https"):
            raise ConfigurationError(f"resource must be an absolute http(s) URL: {resource!r}")
        self.verifier = verifier
        self.resource = resource
        self.authorization_servers = tuple(authorization_servers)
        self.scopes_supported = None if scopes_supported is None else tuple(scopes_supported)
        self.required_scopes = frozenset(required_scopes)
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.cache_seconds = cache_seconds
        self.cache_size = cache_size
        self.hide_unauthorized = hide_unauthorized
        self.dpop = dpop
        if resource is not None and isinstance(verifier, _ResourceBound):
            verifier.bind_resource(resource)

    def share_replay(self, connection: Connection) -> None:
        """Keep the `jti`s of DPoP proofs on Redis (what a server with Redis does)."""
        if self.dpop is None:
            self.dpop = DPoP.quiet()
        self.dpop.share_replay(connection)

    def document(self, resource: str) -> bytes:
        """The protected resource metadata for `resource` (RFC 9728 section 2)."""
        doc: dict[str, object] = {"resource": resource}
        if self.authorization_servers:
            doc["authorization_servers"] = list(self.authorization_servers)
        scopes = self.scopes_supported
        if scopes is None and self.required_scopes:
            scopes = tuple(sorted(self.required_scopes))
        if scopes is not None:
            doc["scopes_supported"] = list(scopes)
        doc["bearer_methods_supported"] = ["header"]
        if self.dpop is not None and self.dpop.advertised:  # RFC 9728 section 2
            doc["dpop_signing_alg_values_supported"] = list(self.dpop.algorithms)
            if self.dpop.required:
                doc["dpop_bound_access_tokens_required"] = True
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return msgspec.json.encode(doc)


def metadata_url(resource: str) -> str:
    """Where the metadata of `resource` lives: the well-known prefix inserted between
    the origin and the path (RFC 9728 section 3.1), the path kept exactly."""
    parts = urlsplit(resource)
    path = parts.path if parts.path != "/" else ""
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"


def _quoted(value: str, limit: int = 200) -> str:
    return '"' + _UNQUOTABLE.sub("?", value[:limit]) + '"'


def challenge(
    metadata: str,
    scopes: Sequence[str] | frozenset[str] = (),
    error: str | None = None,
    description: str | None = None,
    algs: Sequence[str] | None = None,
) -> bytes:
    """A `WWW-Authenticate: Bearer ...` value, or with `algs` a `DPoP ...` one (RFC 9449
    section 7.1: the proof algorithms accepted). No `error` when the request simply had
    no token (RFC 6750 section 3.1)."""
    params: list[str] = []
    if error is not None:
        params.append(f"error={_quoted(error)}")
        if description:
            params.append(f"error_description={_quoted(description)}")
    params.append(f"resource_metadata={_quoted(metadata, 2048)}")
    if scopes:
        params.append(f"scope={_quoted(' '.join(sorted(scopes)), 2048)}")
    if algs is None:
        return ("Bearer " + ", ".join(params)).encode("latin-1")
    params.append(f"algs={_quoted(' '.join(algs))}")
    return ("DPoP " + ", ".join(params)).encode("latin-1")
