"""`JWTVerifier`: access tokens that are signed JWTs (RFC 9068 style), checked with
joserfc against an authorization server's JWKS, a fixed public key or, for HS*, an
explicit shared secret.

What is refused, and why it matters: `alg: none` and any algorithm outside the
allow-list (an attacker picks the header); HS* unless a secret was given (a public key
must never be used as an HMAC secret); tokens over 8 KiB before any parsing; encrypted
(JWE) tokens; a wrong issuer or audience (exact string compare: no URL normalisation,
so `https://x/mcp` and `https://x/mcp/` are different resources); expired or not yet
valid tokens, within `leeway` seconds of clock skew; missing required claims; a JOSE
`typ` outside `token_types` (an ID token or a logout token is no access token). Every
refusal comes with a short description (`check`) for the 401's `error_description`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import (
    ExpiredTokenError,
    InvalidClaimError,
    InvalidKeyIdError,
    JoseError,
    MissingClaimError,
)
from joserfc.jwk import Key, KeySet, OctKey, import_key

from mcpgen._errors import ConfigurationError
from mcpgen.auth._jose import compact_header
from mcpgen.auth._jwks import JwksCache, KeysUnavailableError
from mcpgen.auth._remote import HttpVerifier
from mcpgen.auth._tokens import MAX_TOKEN_BYTES, AccessToken, audience_of, scopes_of, usable_time

__all__ = ["ASYMMETRIC_ALGORITHMS", "JWTVerifier"]

log = logging.getLogger("mcpgen.auth")

ASYMMETRIC_ALGORITHMS = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
_HMAC = ("HS256", "HS384", "HS512")


class JWTVerifier(HttpVerifier):
    """Verifies JWT access tokens locally (no call to the authorization server per
    token once its keys are cached).

    Give exactly one key source: `jwks_uri` (keys fetched with httpx and cached),
    `public_key` (a PEM string or a JWK dict) or `shared_secret` (HS* only). `audience`
    defaults to the protected resource's URL when the verifier is handed to
    `AuthSettings(resource=...)`. `algorithms` is the allow-list (default: the
    asymmetric ones, or HS256 with a shared secret); `none` is never allowed.
    `required_claims` must be present (default: `exp`); `leeway` is the clock skew
    tolerated on `exp`, `nbf` and `iat`. `token_types` are the JOSE header `typ` values
    accepted, compared without case and without an `application/` prefix (default:
    `at+jwt`, RFC 9068's, and `JWT`, which most providers still send); a header without
    `typ` counts as `JWT`. `None` turns the check off. `http` is an `httpx.AsyncClient` to use
    (tests pass one with a mock transport); by default the verifier makes its own.
    """

    def __init__(
        self,
        *,
        issuer: str | None,
        audience: str | Sequence[str] | None = None,
        jwks_uri: str | None = None,
        public_key: str | bytes | Mapping[str, Any] | None = None,
        shared_secret: str | bytes | None = None,
        algorithms: Sequence[str] | None = None,
        leeway: float = 30.0,
        required_claims: Sequence[str] = ("exp",),
        token_types: Sequence[str] | None = ("at+jwt", "JWT"),
        http: httpx.AsyncClient | None = None,
        jwks_ttl: float = 300.0,
        jwks_min_refresh: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if sum(x is not None for x in (jwks_uri, public_key, shared_secret)) != 1:
            raise ConfigurationError("give exactly one of jwks_uri, public_key, shared_secret")
        if algorithms is None:
            algorithms = ("HS256",) if shared_secret is not None else ASYMMETRIC_ALGORITHMS
        allowed = tuple(algorithms)
        if not allowed or any(a.lower() == "none" for a in allowed):
            raise ConfigurationError("the algorithm allow-list must be non-empty, never 'none'")
        hmac = [a for a in allowed if a.upper().startswith("HS")]
        if hmac and shared_secret is None:
            raise ConfigurationError(f"{hmac[0]} needs an explicit shared_secret")
        if shared_secret is not None and len(hmac) != len(allowed):
            raise ConfigurationError("a shared secret verifies HS* algorithms only")
        self.issuer = issuer
        self.audience: tuple[str, ...] | None = (
            None
            if audience is None
            else (audience,)
            if isinstance(audience, str)
            else tuple(audience)
        )
        self.algorithms = frozenset(allowed)
        self.leeway = leeway
        self.required_claims = tuple(required_claims)
        self.token_types = None if token_types is None else frozenset(map(_media, token_types))
        self._clock = clock
        self._client = http
        self._own_client: httpx.AsyncClient | None = None
        self._key: Key | None = None
        self.jwks: JwksCache | None = None
        if jwks_uri is not None:
            self.jwks = JwksCache(
                jwks_uri, self._http, default_ttl=jwks_ttl, min_refresh=jwks_min_refresh
            )
        elif shared_secret is not None:
            secret = shared_secret.encode() if isinstance(shared_secret, str) else shared_secret
            self._key = OctKey.import_key(secret)
        else:
            assert public_key is not None
            self._key = _import_public(public_key)

    async def check(self, token: str) -> AccessToken | str:
        """The token, or why it is refused."""
        if len(token) > MAX_TOKEN_BYTES:
            return "the token is too large"
        header = compact_header(token)
        if header is None:
            return "the token is not a signed JWT"
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            return "the token's signing algorithm is not allowed"
        if self.token_types is not None:
            typ = header.get("typ", "JWT")
            if not isinstance(typ, str) or _media(typ) not in self.token_types:
                return "the token is not an access token (its typ is not accepted)"
        if self.audience is None:
            log.error("JWTVerifier has no audience: give audience= or AuthSettings(resource=)")
            return "the server has no audience configured"
        key = await self._key_for(header.get("kid"))
        if isinstance(key, str):
            return key
        try:
            claims = jwt.decode(token, key, algorithms=[alg]).claims
        except (JoseError, ValueError) as exc:
            log.info("JWT refused: %s", exc)
            return "the token's signature is invalid"
        return self._claims(claims)

    async def _key_for(self, kid: object) -> Key | str:
        if self.jwks is None:
            assert self._key is not None
            return self._key
        if kid is not None and not isinstance(kid, str):
            return "the token's key id is malformed"
        try:
            keys = await self.jwks.keys()
            found = _pick(keys, kid)
            if found is None and kid is not None:
                fresh = await self.jwks.refresh_for_unknown_kid()
                found = None if fresh is None else _pick(fresh, kid)
        except KeysUnavailableError as exc:
            log.warning("cannot verify a token: %s", exc)
            return "the authorization server's signing keys are unavailable"
        return "the token's signing key is unknown" if found is None else found

    def _claims(self, claims: dict[str, Any]) -> AccessToken | str:
        for name in _TIMES:  # 10**400 or 1e400 would overflow the comparisons below
            value = claims.get(name)
            if value is not None and not usable_time(value):
                log.info("JWT refused: its %r claim is no usable time", name)
                return f"the token has an invalid claim ({name})"
        # A plain dict: joserfc's annotation of the claim options changes between releases.
        essential: dict[str, Any] = {name: {"essential": True} for name in self.required_claims}
        registry = jwt.JWTClaimsRegistry(
            now=int(self._clock()), leeway=int(self.leeway), **essential
        )
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            return "the token has expired"
        except MissingClaimError as exc:
            return f"the token lacks a required claim ({exc.claim})"
        except InvalidClaimError as exc:
            return f"the token has an invalid claim ({exc.claim})"
        issuer = claims.get("iss")
        if self.issuer is not None and issuer != self.issuer:
            return "the token was issued by another authorization server"
        aud = claims.get("aud")
        audience = audience_of(aud)
        assert self.audience is not None
        if not any(a in self.audience for a in audience):
            return "the token was issued for another resource"
        sub, client = claims.get("sub"), claims.get("client_id", claims.get("azp"))
        exp = claims.get("exp")
        return AccessToken(
            subject=sub if isinstance(sub, str) else None,
            client_id=client if isinstance(client, str) else None,
            scopes=scopes_of(claims.get("scope", claims.get("scp"))),
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            audience=audience,
            issuer=issuer if isinstance(issuer, str) else None,
            claims=claims,
        )


_TIMES = ("exp", "nbf", "iat")


def _media(typ: str) -> str:
    """A `typ` value in the form it is compared in (RFC 7515 section 4.1.9)."""
    typ = typ.lower()
    return typ[12:] if typ.startswith("application/") else typ


def _pick(keys: KeySet, kid: str | None) -> Key | None:
    try:
        return keys.get_by_kid(kid)
    except InvalidKeyIdError:
        return None


def _import_public(value: str | bytes | Mapping[str, Any]) -> Key:
    """A public key from a JWK dict or a PEM of any type joserfc knows."""
    if isinstance(value, Mapping):
        return import_key(dict(value))
    for kind in ("RSA", "EC", "OKP"):
        try:
            return import_key(value, kind)
        except (JoseError, ValueError, TypeError):
            continue
    raise ConfigurationError("public_key is neither a JWK nor a PEM public key")
