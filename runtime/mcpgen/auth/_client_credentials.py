"""`ClientCredentials`: OAuth for a machine client (no user): the client credentials
grant, authenticated with a shared secret (client_secret_basic / _post) or a private
key (private_key_jwt, RFC 7523; signed with joserfc)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence

import httpx

from mcpgen.auth._client_base import OAuthBase
from mcpgen.auth._discovery import AuthorizationError
from mcpgen.auth._oauth_grants import Signer, auth_method_for, request_tokens
from mcpgen.auth._storage import Grant, TokenStorage

__all__ = ["ClientCredentials"]

ASSERTION_LIFETIME = 300  # seconds


def key_signer(client_id: str, private_key_pem: str, algorithm: str) -> Signer:
    """Makes client assertions for `client_id` signed with the PEM key."""
    try:
        from joserfc import jwt  # noqa: PLC0415 (optional: the auth extra)
        from joserfc.jwk import ECKey, OKPKey, RSAKey, import_key  # noqa: PLC0415
    except ImportError:
        raise AuthorizationError(
            "private_key_jwt needs joserfc: pip install 'mcpgen[auth]'"
        ) from None
    key: RSAKey | ECKey | OKPKey
    if algorithm.startswith(("RS", "PS")):
        key = import_key(private_key_pem, "RSA")
    elif algorithm == "EdDSA":
        key = import_key(private_key_pem, "OKP")
    else:
        key = import_key(private_key_pem, "EC")

    def sign(audience: str) -> str:
        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
            "jti": secrets.token_urlsafe(16),
        }
        return jwt.encode({"alg": algorithm}, claims, key)

    return sign


class ClientCredentials(OAuthBase):
    """Tokens for the client itself: `client_secret`, or `private_key` (PEM) with
    `algorithm` for private_key_jwt. Discovery is the interactive client's."""

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: str | None = None,
        algorithm: str = "ES256",
        scopes: Sequence[str] | None = None,
        storage: TokenStorage | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        dpop: bool = False,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise AuthorizationError("pass exactly one of client_secret and private_key")
        super().__init__(
            scopes=scopes, storage=storage, transport=transport, timeout=timeout, dpop=dpop
        )
        self.client_id = client_id
        self.client_secret = client_secret
        self._signer = (
            key_signer(client_id, private_key, algorithm) if private_key is not None else None
        )

    def signer(self) -> Signer | None:
        return self._signer

    async def obtain(self, http: httpx.AsyncClient, scopes: list[str]) -> Grant:
        metadata, resource = self.metadata, self.resource
        if metadata is None or resource is None:
            raise AuthorizationError("authorization before discovery")
        method = (
            "private_key_jwt"
            if self._signer is not None
            else auth_method_for(metadata, has_secret=True)
        )
        client = Grant(
            issuer=metadata.issuer,
            resource=resource,
            client_id=self.client_id,
            client_secret=self.client_secret,
            auth_method=method,
        )
        form = {"grant_type": "client_credentials"}
        # No refresh token is issued for this grant: there is no user to ask again, so
        # offline_access means nothing here.
        scope = " ".join(s for s in scopes if s != "offline_access")
        if scope:
            form["scope"] = scope
        dpop = self.dpop_for(metadata)
        return await request_tokens(http, metadata, client, form, self._signer, dpop)
