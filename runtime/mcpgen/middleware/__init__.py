"""The built-in policies, each a `mcpgen.Middleware` (docs/guide/policies.md):
`Timeouts`, `RateLimit`, `ResponseCache`, `SizeLimit`, `RequestLog`, `Visibility`.

Policies with shared state (rate limit buckets, cached responses) keep it behind the
interfaces of `mcpgen.stores` (`RateLimitStore`, `ResponseStore`): in this process by
default, on Redis (`mcpgen.stores.redis`) for several workers that must enforce one
limit or share one cache.
"""

from __future__ import annotations

from mcpgen.middleware._cache import CACHED_METHODS, ResponseCache
from mcpgen.middleware._limits import RESPONSE_TOO_LARGE, RequestLog, SizeLimit
from mcpgen.middleware._ratelimit import RATE_LIMITED, Rate, RateLimit, caller_of
from mcpgen.middleware._timeouts import REQUEST_TIMEOUT, Timeouts
from mcpgen.middleware._visibility import Feature, Visibility

__all__ = [
    "CACHED_METHODS",
    "RATE_LIMITED",
    "REQUEST_TIMEOUT",
    "RESPONSE_TOO_LARGE",
    "Feature",
    "Rate",
    "RateLimit",
    "RequestLog",
    "ResponseCache",
    "SizeLimit",
    "Timeouts",
    "Visibility",
    "caller_of",
]
