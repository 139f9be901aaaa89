"""DPoP (RFC 9449): access tokens bound to a key the client holds. Every token
request and every request to the server carries a fresh proof (a JWT signed with
that key, naming the method and URL, and for the server the token's hash); a server
that wants a nonce says so with `use_dpop_nonce` and a `DPoP-Nonce` header, and the
request is sent again with it.

Opt-in (`OAuth(dpop=True)`), and used only with authorization servers that list ES256
in `dpop_signing_alg_values_supported`. The key is kept with the grant, so a stored
DPoP-bound token or refresh token stays usable after a restart.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from urllib.parse import urlsplit

__all__ = ["ALGORITHM", "DPoPKey", "htu"]

ALGORITHM = "ES256"


def htu(url: str) -> str:
    """The `htu` of a request: its URL without query and fragment."""
    return url.split("#", 1)[0].split("?", 1)[0]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class DPoPKey:
    """A P-256 key making DPoP proofs, with the last nonce each origin gave."""

    def __init__(self, private_jwk: dict[str, str] | None = None) -> None:
        try:
            from joserfc.jwk import ECKey  # noqa: PLC0415 (optional: the auth extra)
        except ImportError:
            from mcpgen.auth._discovery import AuthorizationError  # noqa: PLC0415

            raise AuthorizationError("DPoP needs joserfc: pip install 'mcpgen[auth]'") from None
        stored: dict[str, str | list[str]] | None = dict(private_jwk) if private_jwk else None
        self._key = ECKey.import_key(stored) if stored else ECKey.generate_key("P-256")
        self.public = self._key.as_dict(private=False)
        self.nonces: dict[str, str] = {}

    def private_jwk(self) -> dict[str, str]:
        """The key, to be stored with the grant it binds."""
        return {k: str(v) for k, v in self._key.as_dict(private=True).items()}

    def remember_nonce(self, url: str, nonce: str | None) -> None:
        if nonce:
            self.nonces[_origin(url)] = nonce

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for `method` on `url` (with `ath` when presenting a token)."""
        from joserfc import jwt  # noqa: PLC0415 (loaded with the key's module)

        claims: dict[str, object] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method,
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        nonce = self.nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.public}
        return jwt.encode(header, claims, self._key)
