"""What the Streamable HTTP endpoint reads of a request's headers, and the verdicts it
draws from them: whether Host/Origin pass the DNS rebinding check, and which response
kinds (JSON, SSE) an Accept header allows. Both verdicts are memoised, since a client
sends the same headers every time and a deployment sees only a few hosts and origins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpgen.transports._asgi import judge_host_and_origin
from mcpgen.transports._options import HttpOptions

__all__ = ["HeaderVerdicts", "read_headers"]

# Request headers the endpoint reads, with their `str` keys; every `mcp-*` one is read too
# (mirrored params, session). Names arrive lower-case (ASGI).
_READ: dict[bytes, str] = {
    name: name.decode("latin-1")
    for name in (
        b"host",
        b"origin",
        b"content-type",
        b"accept",
        b"mcp-protocol-version",
        b"mcp-method",
        b"mcp-name",
        b"mcp-session-id",
        b"last-event-id",
    )
}


def read_headers(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers the endpoint and the core read, by lower-case name."""
    headers: dict[str, str] = {}
    known = _READ
    for name, value in raw:
        key = known.get(name)
        if key is not None:
            headers[key] = value.decode("latin-1")
        elif name[:4] == b"mcp-":
            headers[name.decode("latin-1")] = value.decode("latin-1")
    return headers


class HeaderVerdicts:
    """The memoised verdicts of one app (its `options`)."""

    def __init__(self, options: HttpOptions) -> None:
        self.options = options
        self._hosts: dict[tuple[Any, ...], bytes | None] = {}  # (host, origin, bound address)
        self._accepts: dict[str, tuple[bool, bool]] = {}  # Accept -> (JSON ok, SSE ok)

    def deny(self, scope: dict[str, Any], headers: dict[str, str]) -> bytes | None:
        """The 403 error frame for a Host/Origin the options refuse, else None."""
        key = (headers.get("host"), headers.get("origin"), (scope.get("server") or ("", 0))[0])
        if key not in self._hosts:
            if len(self._hosts) > 256:  # a few hosts and origins in practice
                self._hosts.clear()
            self._hosts[key] = judge_host_and_origin(self.options, key[2], headers)
        return self._hosts[key]

    def negotiate(self, accept: str) -> tuple[bool, bool]:
        """(may answer JSON, may answer SSE) for an Accept header."""
        verdict = self._accepts.get(accept)
        if verdict is None:
            lowered = accept.lower()
            verdict = (
                "application/json" in lowered or "*/*" in lowered or "application/*" in lowered,
                "text/event-stream" in lowered or "*/*" in lowered or "text/*" in lowered,
            )
            if len(self._accepts) > 64:
                self._accepts.clear()
            self._accepts[accept] = verdict
        return verdict
