"""What a transport needs of a server, as Protocols: `ServerPort` and `SessionPort`.

`mcpgen.Server` satisfies `ServerPort`; so can anything else that hands out sessions
(a proxy, a test double). A transport opens one session per connection (or, for
stateless HTTP requests, per request), feeds it frames with `receive` and carries out
each returned outcome with `deliver`; it never needs the `Server` class.
"""

from __future__ import annotations

from typing import Protocol

from mcpgen._server import Channel, Outcome

__all__ = ["ServerPort", "SessionPort"]


class SessionPort(Protocol):
    """One connection's protocol state, as a transport drives it."""

    def receive(self, line: bytes | str, channel: Channel) -> Outcome:
        """The outcome of one frame; `channel` carries the frames tied to it. Never
        raises: a bug in the core comes back as a JSON-RPC error reply."""
        ...

    @property
    def legacy_version(self) -> str | None:
        """The revision an `initialize` handshake negotiated, or None (no handshake)."""
        ...

    def attach(self, channel: Channel) -> None:
        """Send frames not tied to a request (legacy notifications) to `channel`."""
        ...

    def close(self) -> None:
        """The connection ended: in-flight work is cancelled, the session forgotten."""
        ...


class ServerPort(Protocol):
    """A server as the transports see it."""

    def session(self, channel: Channel | None = None) -> SessionPort:
        """A new session; `channel` (optional) carries its frames not tied to a request."""
        ...

    def freeze(self) -> None:
        """Take the registry snapshot now (an HTTP app does it at startup, before the
        first request)."""
        ...

    def close(self) -> None:
        """Shut down: open listen streams get their final result, tasks end."""
        ...
