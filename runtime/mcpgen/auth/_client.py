"""`OAuth`: the interactive OAuth 2.1 client of an MCP server, an `httpx.Auth` for
`Client.http(url, auth=OAuth(...))`. Authorization code with PKCE S256, the client
registered in the spec's order of preference (pre-registered credentials, a Client ID
Metadata Document, dynamic registration), RFC 9207 `iss` checked, refresh tokens used.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

import httpx
import msgspec

from mcpgen.auth._client_base import OAuthBase
from mcpgen.auth._client_redirect import HeadlessRedirect, RedirectHandler
from mcpgen.auth._discovery import AuthorizationError, ServerMetadata, require_secure
from mcpgen.auth._oauth_grants import auth_method_for, register, request_tokens
from mcpgen.auth._pkce import challenge_of, new_state, new_verifier
from mcpgen.auth._storage import Grant, TokenStorage

__all__ = ["OAuth"]


class OAuth(OAuthBase):
    """Authorization code + PKCE on behalf of a user.

    `redirect` carries the user's approval (default: `HeadlessRedirect`, for servers
    that approve without a user; use `LoopbackRedirect()` for a browser). `client_id`
    and `client_secret` are pre-registered credentials, used only with `client_issuer`
    when it is given, else with the first authorization server they are used with.
    `client_metadata_url` is this client's metadata document (used as its client id
    where the server supports that). Without either, the client registers itself.
    `dpop=True` binds tokens to a key (RFC 9449) where the server offers it.
    """

    def __init__(
        self,
        *,
        redirect: RedirectHandler | None = None,
        client_name: str = "mcpgen",
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        client_metadata_url: str | None = None,
        scopes: Sequence[str] | None = None,
        storage: TokenStorage | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        dpop: bool = False,
    ) -> None:
        super().__init__(
            scopes=scopes, storage=storage, transport=transport, timeout=timeout, dpop=dpop
        )
        self.redirect: RedirectHandler = redirect or HeadlessRedirect(transport=transport)
        self.client_name = client_name
        self.client_id, self.client_secret = client_id, client_secret
        self.client_issuer = client_issuer
        self.client_metadata_url = client_metadata_url

    async def obtain(self, http: httpx.AsyncClient, scopes: list[str]) -> Grant:
        metadata, resource = self.metadata, self.resource
        if metadata is None or resource is None:
            raise AuthorizationError("authorization before discovery")
        endpoint = metadata.authorization_endpoint
        if endpoint is None:
            raise AuthorizationError(f"{metadata.issuer} has no authorization endpoint")
        require_secure(endpoint, "authorization endpoint")
        methods = metadata.code_challenge_methods_supported
        if methods is not None and "S256" not in methods:
            raise AuthorizationError(f"{metadata.issuer} does not support PKCE with S256")
        scope = " ".join(scopes) or None
        client = await self._client(http, metadata, resource, scope)
        verifier, state = new_verifier(), new_state()
        query = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect.redirect_uri,
            "code_challenge": challenge_of(verifier),
            "code_challenge_method": "S256",
            "state": state,
            "resource": resource,
            **({"scope": scope} if scope else {}),
        }
        joiner = "&" if "?" in endpoint else "?"
        answer = await self.redirect.authorize(f"{endpoint}{joiner}{urlencode(query)}", state)
        code = self._check(answer, state, metadata)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect.redirect_uri,
            "code_verifier": verifier,
            **({"scope": scope} if scope else {}),
        }
        return await request_tokens(http, metadata, client, form, dpop=self.dpop_for(metadata))

    @staticmethod
    def _check(answer: dict[str, str], state: str, metadata: ServerMetadata) -> str:
        """The code of an authorization response, once it is known to answer this
        request and to come from this authorization server (RFC 9207: `iss` compared
        as a string when present, required when the server says it sends it)."""
        if answer.get("state") != state:
            raise AuthorizationError("the authorization response carries a foreign state")
        iss = answer.get("iss")
        if iss is not None and iss != metadata.issuer:
            raise AuthorizationError(
                f"the authorization response comes from {iss!r}, not {metadata.issuer!r}"
            )
        if iss is None and metadata.authorization_response_iss_parameter_supported:
            raise AuthorizationError("the authorization response lacks the advertised iss")
        if "error" in answer:
            detail = answer.get("error_description")
            raise AuthorizationError(
                f"authorization refused: {answer['error']}" + (f" ({detail})" if detail else "")
            )
        code = answer.get("code")
        if not code:
            raise AuthorizationError("the authorization response carries no code")
        return code

    async def _client(
        self, http: httpx.AsyncClient, metadata: ServerMetadata, resource: str, scope: str | None
    ) -> Grant:
        """This client's identity at `metadata.issuer`: kept from an earlier
        registration there, pre-registered, its metadata document, or registered now."""
        issuer = metadata.issuer
        kept = await self.stored(issuer, resource)
        if kept is not None:
            return msgspec.structs.replace(kept, access_token=None, expires_at=None)
        if self.client_id is not None and self.client_issuer in (None, issuer):
            self.client_issuer = issuer  # bound to this server from now on
            method = auth_method_for(metadata, self.client_secret is not None)
            return Grant(
                issuer=issuer,
                resource=resource,
                client_id=self.client_id,
                client_secret=self.client_secret,
                auth_method=method,
            )
        if self.client_metadata_url is not None and metadata.client_id_metadata_document_supported:
            return Grant(issuer=issuer, resource=resource, client_id=self.client_metadata_url)
        # Registered for every scope the resource names, not only those asked for now:
        # a server that holds a client to its registered scope (oidc-provider does)
        # would otherwise refuse a later step-up with invalid_scope.
        prm = self.resource_metadata
        every = (scope or "").split() + list(prm.scopes_supported or []) if prm else []
        return await register(
            http,
            metadata,
            resource=resource,
            client_name=self.client_name,
            redirect_uri=self.redirect.redirect_uri,
            scope=" ".join(dict.fromkeys(every)) or scope,
        )
