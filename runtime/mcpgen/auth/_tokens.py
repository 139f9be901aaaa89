"""What a verified bearer token comes to, the interface every verifier implements, a
static verifier for development and tests, and a bounded cache of verified tokens.

Nothing here does I/O or imports an optional dependency: the HTTP app imports this
module (through `mcpgen.auth._server`) whenever auth is configured, and the JWT and
introspection verifiers, which need joserfc and httpx, live in their own modules.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

import msgspec

__all__ = [
    "MAX_TOKEN_BYTES",
    "AccessToken",
    "CheckingVerifier",
    "StaticTokenVerifier",
    "TokenCache",
    "TokenVerifier",
]

# Longer bearer tokens are refused before any parsing (the bad-input bar).
MAX_TOKEN_BYTES = 8 * 1024


class AccessToken(msgspec.Struct, frozen=True, kw_only=True):
    """A bearer token that a verifier accepted: who it speaks for and what it allows.

    `subject` is the resource owner (`sub`), `client_id` the OAuth client that holds the
    token; at least one of them names the caller (`principal`). `scopes` are the granted
    scopes, `expires_at` the expiry in Unix seconds (None: the verifier did not say),
    `audience` the resource(s) the token was issued for, `claims` everything the token
    or the introspection response carried.
    """

    subject: str | None = None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: float | None = None
    audience: tuple[str, ...] = ()
    issuer: str | None = None
    claims: Mapping[str, Any] = msgspec.field(default_factory=dict)

    @property
    def principal(self) -> str | None:
        """The key of the identity that owns sessions, tasks and requestState made with
        this token: the subject, or the client for a token issued to a client on its own
        behalf, each in its own namespace and qualified by the issuer, so that a client
        named "alice" is not the user "alice", and alice of one authorization server is
        not alice of another. An opaque string (a JSON array: issuer, "sub" or
        "client", name); None when the token names neither."""
        if self.subject:
            return _key(self.issuer, "sub", self.subject)
        if self.client_id:
            return _key(self.issuer, "client", self.client_id)
        return None

    def has_scopes(self, needed: Iterable[str]) -> bool:
        return self.scopes.issuperset(needed)

    def expired(self, now: float, leeway: float = 0.0) -> bool:
        return self.expires_at is not None and self.expires_at + leeway <= now


@functools.lru_cache(maxsize=4096)  # asked on every request of a cached token
def _key(issuer: str | None, kind: str, name: str) -> str:
    return msgspec.json.encode([issuer, kind, name]).decode()


class TokenVerifier(Protocol):
    """Turns a bearer token into an `AccessToken`, or None when it is not acceptable
    (bad signature, wrong issuer or audience, expired, revoked, keys unavailable)."""

    async def verify(self, token: str) -> AccessToken | None: ...


@runtime_checkable
class CheckingVerifier(Protocol):
    """A verifier that can also say why it refused a token: `check` returns the token
    or a short description for the `WWW-Authenticate` header. Every verifier of this
    package implements it; a plain `TokenVerifier` gets a generic description."""

    async def verify(self, token: str) -> AccessToken | None: ...

    async def check(self, token: str) -> AccessToken | str: ...


_LATEST = 2**53  # seconds: far past any real expiry, and exact as a float


def usable_time(value: object) -> bool:
    """Whether a time claim (a NumericDate, RFC 7519) compares as a number: finite and
    in range (10**400 would overflow, 1e400 is infinite)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return -_LATEST < value < _LATEST  # False for NaN as well


def scopes_of(value: object) -> frozenset[str]:
    """Scopes from a `scope` claim (space-separated, RFC 8693/9068) or a list (`scp`)."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(s for s in value if isinstance(s, str))
    return frozenset()


def audience_of(value: object) -> tuple[str, ...]:
    """The `aud` claim (a string or a list of strings) as a tuple."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(a for a in value if isinstance(a, str))
    return ()


class StaticTokenVerifier:
    """Fixed tokens for development and tests: each maps to an `AccessToken`, or to a
    collection of scopes (the token then speaks for the subject named like the token)."""

    def __init__(
        self,
        tokens: Mapping[str, AccessToken | Iterable[str]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._tokens: dict[str, AccessToken] = {
            token: value
            if isinstance(value, AccessToken)
            else AccessToken(subject=token, scopes=frozenset(value))
            for token, value in tokens.items()
        }
        self._clock = clock

    async def check(self, token: str) -> AccessToken | str:
        found = self._tokens.get(token)
        if found is None:
            return "unknown token"
        if found.expired(self._clock()):
            return "the token has expired"
        return found

    async def verify(self, token: str) -> AccessToken | None:
        found = await self.check(token)
        return found if isinstance(found, AccessToken) else None


class TokenCache:
    """Verified tokens until they expire (and at most `ttl` seconds), at most
    `max_size` of them, the oldest out first (a hit costs one lookup and no
    reordering). Keyed by the raw token (or the raw `Authorization` value): a token is
    an unguessable secret, so holding it in memory adds nothing an attacker lacks."""

    def __init__(
        self, ttl: float = 60.0, max_size: int = 10_000, clock: Callable[[], float] = time.time
    ) -> None:
        self.ttl = ttl
        self.max_size = max_size
        self.clock = clock
        self._entries: dict[str | bytes, tuple[AccessToken, float]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str | bytes) -> AccessToken | None:
        entry = self._entries.get(token)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._entries[token]
            return None
        return entry[0]

    def put(self, token: str | bytes, access: AccessToken) -> None:
        if self.ttl <= 0 or self.max_size <= 0:
            return
        until = self.clock() + self.ttl
        if access.expires_at is not None:
            until = min(until, access.expires_at)
        self._entries.pop(token, None)
        self._entries[token] = (access, until)
        while len(self._entries) > self.max_size:
            del self._entries[next(iter(self._entries))]
