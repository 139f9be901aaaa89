"""An authorization server's signing keys (a JWKS document), fetched with httpx and
cached for as long as its `Cache-Control: max-age` allows.

One fetch at a time: concurrent callers share the fetch in flight instead of queueing
on a lock. An unknown `kid` may force one early re-fetch (keys rotate), but at most
once per `min_refresh` seconds, so a stream of tokens with made-up key ids cannot turn
the server into an amplifier against the key endpoint. A fetch that fails keeps the keys
already held (logged); with none held, verification fails with a description.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet, import_key

__all__ = ["JwksCache", "KeysUnavailableError"]

log = logging.getLogger("mcpgen.auth")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_NO_STORE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\b", re.IGNORECASE)


class KeysUnavailableError(Exception):
    """No usable key set: the endpoint failed and nothing was cached before."""


def max_age(cache_control: str | None, default: float) -> float:
    """Seconds a response may be reused for, from its Cache-Control header."""
    if not cache_control:
        return default
    if _NO_STORE.search(cache_control):
        return 0.0
    found = _MAX_AGE.search(cache_control)
    return float(found.group(1)) if found else default


class JwksCache:
    """The key set at `uri`, reused until its max-age (clamped to
    [`min_refresh`, `max_ttl`]; `default_ttl` without a header)."""

    def __init__(
        self,
        uri: str,
        http: Callable[[], httpx.AsyncClient],
        *,
        default_ttl: float = 300.0,
        min_refresh: float = 10.0,
        max_ttl: float = 86_400.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.uri = uri
        self._http = http
        self.default_ttl = default_ttl
        self.min_refresh = min_refresh
        self.max_ttl = max_ttl
        self._clock = clock
        self._keys: KeySet | None = None
        self._fresh_until = 0.0
        self._last_kid_refresh: float | None = None
        self._inflight: asyncio.Future[KeySet | None] | None = None
        self.fetches = 0  # how many times the endpoint was asked (tests, metrics)

    async def keys(self) -> KeySet:
        """The current key set, fetched if none is held or it went stale."""
        now = self._clock()
        if now < self._fresh_until:
            if self._keys is not None:
                return self._keys
            if self._inflight is None:  # the last fetch failed just now: do not hammer
                raise KeysUnavailableError(f"the signing keys at {self.uri} are unavailable")
        return await self._refresh()

    async def refresh_for_unknown_kid(self) -> KeySet | None:
        """A fresh key set after a token named a key not held, unless such a re-fetch
        happened less than `min_refresh` seconds ago (then None: keep what we have)."""
        now = self._clock()
        last = self._last_kid_refresh
        if last is not None and now - last < self.min_refresh:
            return None
        self._last_kid_refresh = now
        return await self._refresh()

    async def _refresh(self) -> KeySet:
        if self._inflight is None:
            self._inflight = asyncio.ensure_future(self._fetch())
            self._inflight.add_done_callback(self._landed)
        fetched = await asyncio.shield(self._inflight)
        keys = fetched or self._keys
        if keys is None:
            raise KeysUnavailableError(f"the signing keys at {self.uri} are unavailable")
        return keys

    def _landed(self, _: asyncio.Future[KeySet | None]) -> None:
        self._inflight = None

    async def _fetch(self) -> KeySet | None:
        self.fetches += 1
        try:
            response = await self._http().get(self.uri, headers={"accept": "application/json"})
            response.raise_for_status()
            keys = _signing_keys(response.json())
        except (httpx.HTTPError, ValueError, TypeError, KeyError, JoseError) as exc:
            held = "keeping the keys held" if self._keys is not None else "no keys held"
            log.warning("fetching the JWKS at %s failed (%s); %s", self.uri, exc, held)
            # Do not ask again at once: the next try waits for `min_refresh`.
            self._fresh_until = self._clock() + self.min_refresh
            return None
        ttl = max_age(response.headers.get("cache-control"), self.default_ttl)
        self._keys = keys
        self._fresh_until = self._clock() + min(max(ttl, self.min_refresh), self.max_ttl)
        return keys


def _signing_keys(document: object) -> KeySet:
    """The signature keys of a JWKS document. Encryption keys (`use: enc`) and keys
    of a type joserfc does not know are skipped rather than spoiling the whole set."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JWKS document")
    keys: list[Key] = []
    for entry in document["keys"]:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        try:
            keys.append(import_key(entry))
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            log.info("skipping a key of the JWKS (%s)", exc)
    if not keys:
        raise ValueError("the JWKS has no usable signing key")
    return KeySet(keys)
