"""What a method handler may touch of the session that received its request.

Handlers get the session as this narrow view, not as `Session`: the session module
imports the method table, so the table cannot import it back, and a handler has no
business with the rest of the session anyway.
"""

from __future__ import annotations

from typing import Protocol

from mcpgen._server._bus import Listener

__all__ = ["LegacyView", "SessionView"]


class LegacyView(Protocol):
    """The state a legacy (`initialize`) handshake created, as its methods change it."""

    log_rank: int  # logging/setLevel
    subscriptions: set[str]  # resources/subscribe and unsubscribe


class SessionView(Protocol):
    @property
    def legacy(self) -> LegacyView | None:
        """The legacy state, or None for a modern request."""
        ...

    def register_listen(self, listener: Listener) -> None:
        """Keep a `subscriptions/listen` stream open until the client cancels it."""
        ...
