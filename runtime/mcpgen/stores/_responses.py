"""Cached responses (`ResponseStore`) and their in-memory implementation.

Entries belong to a group (e.g. "tools", or "resource:<uri>"); invalidating a group
drops all of its entries at once. A shared store (Redis) gives every worker the same
cache, and one worker's invalidation holds for all.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

__all__ = ["InMemoryResponseStore", "ResponseStore"]


class ResponseStore(Protocol):
    """Where `mcpgen.middleware.ResponseCache` keeps encoded results."""

    async def get(self, group: str, key: str) -> bytes | None:
        """The entry under `key` in `group`, or None (absent, expired, invalidated)."""
        ...

    async def put(self, group: str, key: str, value: bytes, ttl_ms: int) -> None:
        """Keep `value` for `ttl_ms` milliseconds (unless its group is invalidated)."""
        ...

    async def invalidate(self, group: str) -> None:
        """Forget every entry of `group`."""
        ...


class InMemoryResponseStore:
    """Entries in this process, at most `max_entries` (least recently used go first)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, max_entries: int = 10_000
    ) -> None:
        self.clock = clock
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], tuple[float, bytes]] = OrderedDict()
        self._groups: dict[str, set[str]] = {}

    async def get(self, group: str, key: str) -> bytes | None:
        found = self._entries.get((group, key))
        if found is None:
            return None
        if found[0] <= self.clock():
            self._drop((group, key))
            return None
        self._entries.move_to_end((group, key))
        return found[1]

    async def put(self, group: str, key: str, value: bytes, ttl_ms: int) -> None:
        self._entries[group, key] = (self.clock() + ttl_ms / 1000, value)
        self._entries.move_to_end((group, key))
        self._groups.setdefault(group, set()).add(key)
        while len(self._entries) > self.max_entries:
            self._drop(next(iter(self._entries)))

    async def invalidate(self, group: str) -> None:
        self.drop(group)

    def drop(self, group: str) -> None:
        """`invalidate`, at once (a change event's callback is not a coroutine)."""
        for key in self._groups.pop(group, set()):
            self._entries.pop((group, key), None)

    def _drop(self, entry: tuple[str, str]) -> None:
        self._entries.pop(entry, None)
        keys = self._groups.get(entry[0])
        if keys is not None:
            keys.discard(entry[1])
            if not keys:  # (groups come and go with the entries: one per resource read)
                del self._groups[entry[0]]
