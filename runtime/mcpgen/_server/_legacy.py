"""The state a legacy `initialize` handshake creates, and the requests its revision
lets a client send (the modern era keeps no per-connection state)."""

from __future__ import annotations

import functools
from typing import Any

from mcpgen import _protocol as proto

__all__ = ["LegacyState", "client_methods"]


@functools.cache
def client_methods(version: str) -> frozenset[str]:
    """The requests a client may send in the legacy revision `version`."""
    return frozenset(
        method
        for method, info in proto.legacy_methods(version).items()
        if info.direction in ("client_to_server", "both")
    )


class LegacyState:
    """The state an `initialize` handshake creates (legacy era only)."""

    __slots__ = ("caps", "info", "initialized", "log_rank", "subscriptions", "version")

    def __init__(self, version: str, caps: dict[str, Any], info: dict[str, Any]) -> None:
        self.version = version
        self.caps = caps
        self.info = info
        self.initialized = False
        self.log_rank: int = 0  # every level until logging/setLevel says otherwise
        self.subscriptions: set[str] = set()
