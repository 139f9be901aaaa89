"""The client's calls to an authorization server's endpoints: dynamic client
registration (RFC 7591), token requests (authorization code, refresh, client
credentials) and token revocation (RFC 7009), with the token endpoint authentication
the registration settled on.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

import msgspec

from mcpgen.auth._discovery import AuthorizationError, ServerMetadata, loopback_host
from mcpgen.auth._oauth_dpop import DPoPKey
from mcpgen.auth._storage import Grant

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ASSERTION_TYPE",
    "Signer",
    "TokenRefusedError",
    "auth_method_for",
    "register",
    "request_tokens",
    "revoke_token",
]

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

# Makes a private_key_jwt client assertion for an audience (the issuer).
Signer = Callable[[str], str]


class _Tokens(msgspec.Struct, kw_only=True):
    access_token: str
    token_type: str = "Bearer"
    expires_in: float | None = None
    refresh_token: str | None = None
    scope: str | None = None


class _Registered(msgspec.Struct, kw_only=True):
    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None


class TokenRefusedError(AuthorizationError):
    """The token endpoint answered with an error (the grant, such as a refresh token,
    is no good), as opposed to not answering at all."""


class _Failure(msgspec.Struct, kw_only=True):
    error: str = "unknown_error"
    error_description: str | None = None


def auth_method_for(metadata: ServerMetadata, has_secret: bool) -> str:
    """The token endpoint authentication to use: with a secret, basic when offered,
    else post; without one, none. An absent list means client_secret_basic
    (RFC 8414's default)."""
    offered = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
    if not has_secret:
        return "none"
    for method in ("client_secret_basic", "client_secret_post"):
        if method in offered:
            return method
    return "client_secret_basic"


def _registration_method(metadata: ServerMetadata) -> str:
    """The method a new registration asks for: none (a native client keeps no
    secret) when offered, else what the server accepts."""
    offered = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in offered:
            return method
    return offered[0]


def _application_type(redirect_uri: str) -> str:
    parts = urlsplit(redirect_uri)
    if parts.scheme not in ("http", "https") or loopback_host(parts.hostname or ""):
        return "native"
    return "web"


async def _post_form(
    http: httpx.AsyncClient,
    url: str,
    form: dict[str, str],
    headers: dict[str, str],
    dpop: DPoPKey | None,
) -> bytes:
    """The token endpoint's 200 answer; with DPoP, one retry when it asks for a nonce."""
    import httpx  # noqa: PLC0415 (loaded already: `http` is an httpx client)

    for attempt in (1, 2):
        proof = {"dpop": dpop.proof("POST", url)} if dpop is not None else {}
        try:
            response = await http.post(
                url, data=form, headers={"accept": "application/json", **headers, **proof}
            )
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"token request to {url} failed: {exc}") from exc
        if dpop is not None:
            dpop.remember_nonce(url, response.headers.get("dpop-nonce"))
        if response.status_code == 200:
            return response.content
        if attempt == 1 and dpop is not None and b"use_dpop_nonce" in response.content:
            continue
        break
    raise TokenRefusedError(f"token endpoint {url}: {_failure(response)}")


def _failure(response: httpx.Response) -> str:
    try:
        failure = msgspec.json.decode(response.content, type=_Failure)
    except msgspec.DecodeError:
        return f"HTTP {response.status_code}"
    detail = f": {failure.error_description}" if failure.error_description else ""
    return f"HTTP {response.status_code} {failure.error}{detail}"


async def register(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    *,
    resource: str,
    client_name: str,
    redirect_uri: str | None,
    scope: str | None,
) -> Grant:
    """A new client at `metadata`'s registration endpoint (a Grant without tokens)."""
    import httpx  # noqa: PLC0415 (loaded already: `http` is an httpx client)

    endpoint = metadata.registration_endpoint
    if endpoint is None:
        raise AuthorizationError(
            f"{metadata.issuer}: no client credentials, no client ID metadata document"
            " and no dynamic registration: pass client_id (pre-registered)"
        )
    grants = ["authorization_code"]
    if metadata.grant_types_supported is None or "refresh_token" in metadata.grant_types_supported:
        grants.append("refresh_token")
    method = _registration_method(metadata)
    body: dict[str, object] = {
        "client_name": client_name,
        "grant_types": grants,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if redirect_uri is not None:
        body["redirect_uris"] = [redirect_uri]
        body["application_type"] = _application_type(redirect_uri)
    if scope:
        body["scope"] = scope
    try:
        response = await http.post(endpoint, json=body, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"registration at {endpoint} failed: {exc}") from exc
    if response.status_code not in (200, 201):
        raise AuthorizationError(f"registration at {endpoint}: {_failure(response)}")
    try:
        registered = msgspec.json.decode(response.content, type=_Registered)
    except msgspec.DecodeError as exc:
        raise AuthorizationError(f"registration at {endpoint}: bad answer ({exc})") from None
    return Grant(
        issuer=metadata.issuer,
        resource=resource,
        client_id=registered.client_id,
        client_secret=registered.client_secret,
        auth_method=registered.token_endpoint_auth_method or method,
    )


def _client_authentication(
    grant: Grant, form: dict[str, str], audience: str, signer: Signer | None
) -> dict[str, str]:
    """Adds the client's authentication to `form`; returns the headers it needs."""
    method = grant.auth_method
    if method == "private_key_jwt":
        if signer is None:
            raise AuthorizationError("private_key_jwt needs a private key")
        form["client_id"] = grant.client_id
        form["client_assertion_type"] = ASSERTION_TYPE
        form["client_assertion"] = signer(audience)
        return {}
    if method == "client_secret_basic" and grant.client_secret is not None:
        # RFC 6749 section 2.3.1: both parts form-encoded before joining.
        pair = f"{quote(grant.client_id, safe='')}:{quote(grant.client_secret, safe='')}"
        return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    form["client_id"] = grant.client_id
    if method == "client_secret_post" and grant.client_secret is not None:
        form["client_secret"] = grant.client_secret
    return {}


async def request_tokens(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    grant: Grant,
    form: dict[str, str],
    signer: Signer | None = None,
    dpop: DPoPKey | None = None,
) -> Grant:
    """`grant` with the tokens the token endpoint issues for `form` (its grant type
    and parameters); `resource` is added (RFC 8707), exactly the grant's. With `dpop`,
    the token is bound to that key (if the server binds it)."""
    form = {**form, "resource": grant.resource}
    headers = _client_authentication(grant, form, metadata.issuer, signer)
    raw = await _post_form(http, metadata.token_endpoint, form, headers, dpop)
    try:
        tokens = msgspec.json.decode(raw, type=_Tokens)
    except msgspec.DecodeError as exc:
        raise AuthorizationError(f"token endpoint: bad answer ({exc})") from None
    kind = tokens.token_type.lower()
    bound = kind == "dpop" and dpop is not None
    if kind != "bearer" and not bound:
        raise AuthorizationError(f"token endpoint: unsupported token type {tokens.token_type!r}")
    now = time.time()
    expires = now + tokens.expires_in if tokens.expires_in is not None else None
    return msgspec.structs.replace(
        grant,
        access_token=tokens.access_token,
        token_type="DPoP" if bound else "Bearer",
        dpop_key=dpop.private_jwk() if bound and dpop is not None else None,
        # A refresh answer without a new refresh token leaves the old one valid.
        refresh_token=tokens.refresh_token or grant.refresh_token,
        scope=tokens.scope if tokens.scope is not None else form.get("scope", grant.scope),
        expires_at=expires,
        issued_at=now,
    )


async def revoke_token(
    http: httpx.AsyncClient,
    endpoint: str,
    metadata: ServerMetadata,
    grant: Grant,
    token: str,
    hint: str,
    signer: Signer | None = None,
) -> None:
    """Revoke `token` (a `hint`: refresh_token or access_token) at the revocation
    `endpoint`, authenticated as at the token endpoint. Raises AuthorizationError
    with the server's reason (never the token) when it is not revoked."""
    import httpx  # noqa: PLC0415 (loaded already: `http` is an httpx client)

    form = {"token": token, "token_type_hint": hint}
    headers = _client_authentication(grant, form, metadata.issuer, signer)
    try:
        response = await http.post(endpoint, data=form, headers=headers)
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"revocation at {endpoint} failed: {exc}") from exc
    # RFC 7009 section 2.2: 200 also for a token the server does not know (already
    # invalid), so it is the only answer that means done.
    if response.status_code != 200:
        raise AuthorizationError(f"revocation at {endpoint}: {_failure(response)}")
