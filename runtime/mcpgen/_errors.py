"""Exceptions of the public API. Imported by every layer; imports nothing of ours."""

from __future__ import annotations

from typing import Any

__all__ = ["ClientError", "ConfigurationError", "McpError"]


class ConfigurationError(Exception):
    """The API was used wrongly (raised at once, at registration or start-up)."""


class ClientError(Exception):
    """A local client failure that is not the peer's answer (no JSON-RPC code):
    the connection closed, the server broke the protocol, too many input rounds."""


class McpError(Exception):
    """A deliberate protocol error: the request is answered with this JSON-RPC error.

    Raise it from a handler when the request itself is wrong (unknown entity, bad
    parameters); any other exception from a tool becomes an `isError` tool result.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"
