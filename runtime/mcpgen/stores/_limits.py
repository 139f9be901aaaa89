"""Token buckets for rate limits (`RateLimitStore`) and their in-memory implementation.

A bucket holds up to `burst` tokens and refills at `rate` tokens a second. A request
takes `cost` tokens from each of several buckets at once (per caller, per tool,
global): all or none, so a refused request uses up nothing. A shared store (Redis)
makes every worker of a cluster draw from the same buckets.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

__all__ = ["Bucket", "InMemoryRateLimitStore", "RateLimitStore"]


class Bucket(msgspec.Struct, frozen=True):
    """One token bucket: its key, `rate` tokens a second, at most `burst` tokens."""

    key: str
    rate: float
    burst: float


class RateLimitStore(Protocol):
    """Where token buckets live (`mcpgen.middleware.RateLimit` draws from them)."""

    async def take(self, buckets: Sequence[Bucket], cost: float = 1.0) -> float:
        """Take `cost` tokens from every bucket, atomically: 0.0 when taken; else
        nothing is taken and the result is the seconds until all would have them."""
        ...


class InMemoryRateLimitStore:
    """Buckets in this process (bounded: the least recently used are forgotten, which
    only ever lets a forgotten caller start again with a full bucket)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_buckets: int = 100_000
    ) -> None:
        self.clock = clock
        self.max_buckets = max_buckets
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # tokens, at

    async def take(self, buckets: Sequence[Bucket], cost: float = 1.0) -> float:
        now = self.clock()
        levels = []
        wait = 0.0
        for bucket in buckets:
            tokens, at = self._buckets.get(bucket.key, (bucket.burst, now))
            tokens = min(bucket.burst, tokens + (now - at) * bucket.rate)
            levels.append(tokens)
            if tokens < cost:
                wait = max(wait, (cost - tokens) / bucket.rate if bucket.rate > 0 else 3600.0)
        if wait > 0:
            return wait
        for bucket, tokens in zip(buckets, levels, strict=True):
            self._buckets[bucket.key] = (tokens - cost, now)
            self._buckets.move_to_end(bucket.key)
        while len(self._buckets) > self.max_buckets:
            self._buckets.popitem(last=False)
        return 0.0
