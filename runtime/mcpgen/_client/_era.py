"""Era selection's data: the probe's verdict, the refusal that points to HTTP+SSE, and
the cache of what probes learned per endpoint (an object the client owns, with a TTL).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, Literal, NamedTuple

import msgspec

from mcpgen import _protocol as proto

__all__ = [
    "DEFAULT_VERDICT_TTL",
    "ProbeVerdict",
    "Verdict",
    "VerdictCache",
    "initialize_refused",
    "shared_verdicts",
]

DEFAULT_VERDICT_TTL: Final = 600.0  # seconds a probe's verdict is trusted


class ProbeVerdict(msgspec.Struct, frozen=True):
    """What one `server/discover` probe said."""

    era: Literal["modern", "legacy", "retry"]
    version: str | None = None  # modern: the version to use; retry: the one to try


class Verdict(NamedTuple):
    """A cached observation of one endpoint: its era ("sse": legacy over the HTTP+SSE
    transport) and the version agreed."""

    era: Literal["modern", "legacy", "sse"]
    version: str


class VerdictCache:
    """Era verdicts by endpoint key, each trusted for `ttl` seconds after it was learned;
    past that the client probes again. `clock` returns seconds (monotonic)."""

    def __init__(
        self, ttl: float = DEFAULT_VERDICT_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._verdicts: dict[str, tuple[float, Verdict]] = {}

    def get(self, key: str) -> Verdict | None:
        """The fresh verdict for `key`, or None (never seen, or expired: forgotten)."""
        entry = self._verdicts.get(key)
        if entry is None:
            return None
        if entry[0] <= self.clock():
            del self._verdicts[key]
            return None
        return entry[1]

    def put(self, key: str, verdict: Verdict) -> None:
        """Keep `verdict` for `key` (an endpoint) for `ttl` seconds."""
        self._verdicts[key] = (self.clock() + self.ttl, verdict)

    def forget(self, key: str) -> None:
        """Drop what is kept for `key`."""
        self._verdicts.pop(key, None)

    def clear(self) -> None:
        """Drop every verdict."""
        self._verdicts.clear()

    def __len__(self) -> int:
        return len(self._verdicts)


_SHARED = VerdictCache()


def shared_verdicts() -> VerdictCache:
    """The cache every client uses unless given its own (one per process)."""
    return _SHARED


def initialize_refused(http_status: int | None, answered: bool) -> bool:
    """Era detection's last step over HTTP: an `initialize` POST refused with one of
    `proto.SSE_FALLBACK_STATUSES` and no JSON-RPC answer to it (no body, or an error not
    addressed to that request) found no MCP endpoint; an HTTP+SSE server may be there."""
    return http_status in proto.SSE_FALLBACK_STATUSES and not answered
