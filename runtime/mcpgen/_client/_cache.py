"""The client's result cache: results a server marked cacheable (`ttlMs`), by request,
until they expire or a notification says they changed. Pure state; the caller gives
the time."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import msgspec

__all__ = ["ResultCache"]

CacheKey = tuple[str, Hashable]  # (method, what distinguishes the request: cursor, uri)

# Which cached methods a notification makes stale.
INVALIDATES: Final[dict[str, tuple[str, ...]]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class ResultCache:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._entries: dict[CacheKey, tuple[float, msgspec.Struct]] = {}

    def get(self, key: CacheKey, now: float) -> msgspec.Struct | None:
        """The cached result for `key` if still fresh at `now` (seconds, monotonic)."""
        hit = self._entries.get(key)
        return hit[1] if hit is not None and hit[0] > now else None

    def put(self, key: CacheKey, result: msgspec.Struct, fetched_at: float) -> None:
        """Keep `result` for its `ttlMs` from when it was asked for (nothing without one)."""
        ttl = getattr(result, "ttl_ms", 0)
        if self.enabled and type(ttl) is int and ttl > 0:
            self._entries[key] = (fetched_at + ttl / 1000, result)

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        """Forget what a server notification says has changed."""
        for stale in INVALIDATES.get(method, ()):
            self.invalidate(stale)
        if method == "notifications/resources/updated":
            self.invalidate("resources/read", params.get("uri"))

    def invalidate(self, method: str, detail: Hashable = None) -> None:
        for key in [
            k for k in self._entries if k[0] == method and (detail is None or k[1] == detail)
        ]:
            del self._entries[key]
