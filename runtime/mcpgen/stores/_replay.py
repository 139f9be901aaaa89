"""`ReplayCache`: the identifiers seen once, for as long as they could be replayed, and
its in-memory implementation.

A DPoP proof (RFC 9449) carries a `jti` that a server accepts once within the proof's
time window; a second use of the same proof is a replay. Workers behind one endpoint
share the cache (`mcpgen.stores.redis.RedisReplayCache`), so a proof replayed at
another worker is refused too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from mcpgen.stores._interfaces import StoreUnavailableError

__all__ = ["InMemoryReplayCache", "ReplayCache"]


class ReplayCache(Protocol):
    """Identifiers used once, each remembered for `ttl` seconds."""

    async def first_use(self, key: str, ttl: float) -> bool:
        """Record `key`; True when it was not seen within its ttl (the first use),
        False for a replay. Atomic: of concurrent callers with one key, one gets True.
        Raises `StoreUnavailableError` when it cannot tell."""
        ...


class InMemoryReplayCache:
    """A `ReplayCache` in a dict, for one process. At most `max_entries` unexpired
    identifiers: past that, a new one is refused (`StoreUnavailableError`) rather than
    an unexpired one forgotten, which would let it be replayed."""

    def __init__(
        self, *, max_entries: int = 100_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.clock = clock
        self._until: dict[str, float] = {}  # key -> when it may be used again

    def __len__(self) -> int:
        return len(self._until)

    async def first_use(self, key: str, ttl: float) -> bool:
        now = self.clock()
        until = self._until.get(key)
        if until is not None and until > now:
            return False
        entries = self._until
        if until is None and len(entries) >= self.max_entries:
            self._drop_expired(now)
            if len(entries) >= self.max_entries:
                raise StoreUnavailableError("the replay cache is full")
        entries.pop(key, None)
        entries[key] = now + ttl
        return True

    def _drop_expired(self, now: float) -> None:
        # Insertion order is roughly expiry order (one ttl per deployment): stop at the
        # first live entry, then sweep the rest only if that freed nothing.
        entries = self._until
        for key in list(entries):
            if entries[key] > now:
                break
            del entries[key]
        if len(entries) >= self.max_entries:
            for key in [k for k, until in entries.items() if until <= now]:
                del entries[key]
