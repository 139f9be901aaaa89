"""PKCE (RFC 7636, method S256) and the random `state` of an authorization request."""

from __future__ import annotations

import base64
import hashlib
import secrets

__all__ = ["challenge_of", "new_state", "new_verifier"]


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def new_verifier() -> str:
    """A fresh code verifier: 43 characters from 32 random bytes (the RFC's minimum
    length, with the full 256 bits of entropy it recommends)."""
    return _b64url(secrets.token_bytes(32))


def challenge_of(verifier: str) -> str:
    """The S256 challenge sent in the authorization request for `verifier`."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_state() -> str:
    """An unguessable `state` binding a callback to the request that caused it."""
    return secrets.token_urlsafe(24)
