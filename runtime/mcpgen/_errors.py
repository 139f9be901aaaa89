"""Exceptions of the public API. Imported by every layer; imports nothing of ours.

Three kinds, never mixed: `McpError` is a JSON-RPC error (one the peer really sent, or
one a handler raises to be sent); `ClientError` is a local failure of the client that
carries no JSON-RPC code: the transport (`TransportError` and its subclasses, raised by
every client link alike) or a server breaking the protocol (`ProtocolViolationError`);
`ConfigurationError` is API misuse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgen_types.latest import CallToolResult

__all__ = [
    "ClientError",
    "ConfigurationError",
    "ConnectError",
    "ConnectionClosedError",
    "HttpStatusError",
    "McpError",
    "ProtocolViolationError",
    "RequestTimeoutError",
    "TransportError",
    "ToolError",
    "TransportTimeoutError",
]


class ConfigurationError(Exception):
    """The API was used wrongly (raised at once, at registration or start-up)."""


class ClientError(Exception):
    """A local client failure that is not the peer's answer (no JSON-RPC code):
    the transport failed, the server broke the protocol, too many input rounds."""


class TransportError(ClientError):
    """The link to the server failed; the same family on stdio, in-memory, Streamable
    HTTP and HTTP+SSE links (the subclasses say how)."""


class ConnectError(TransportError):
    """The server could not be reached or started (no process, no listener, no
    endpoint on either HTTP transport)."""


class TransportTimeoutError(TransportError, TimeoutError):
    """No answer in time (a request's timeout, or the transport's own); also a
    `TimeoutError`."""


class RequestTimeoutError(TransportTimeoutError):
    """The server did not answer a request within its timeout (`Client(timeout=)`, or
    the call's `timeout=`); the client has told the server to stop working on it
    (`notifications/cancelled`, or the request's HTTP stream closed). `timeout` is
    the limit in seconds."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"no response within {timeout} s (the request was cancelled)")
        self.timeout = timeout


class ConnectionClosedError(TransportError):
    """The connection ended: the server exited or closed it, or the client was closed
    while the request waited."""


class HttpStatusError(TransportError):
    """An HTTP response that carried no JSON-RPC answer: its `status`, the start of its
    `body`, and its `location` header when it redirected."""

    def __init__(self, message: str, status: int, body: str = "", location: str | None = None):
        super().__init__(message)
        self.status = status
        self.body = body
        self.location = location


class ProtocolViolationError(ClientError):
    """The server broke the protocol: a malformed or out-of-place result, a version it
    may not answer with, a task that is not the one asked for."""


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


class ToolError(Exception):
    """A tool's error result (`isError`), on either side.

    In a tool handler, `raise ToolError("no station in Atlantis")` answers the call with
    an error result whose text is exactly that message, whatever the tool's declared
    return type (its output schema stays as declared); no traceback is logged and
    `mask_errors` does not hide it, since the message is meant for the model.

    The typed clients that `mcpgen stubs` writes raise `ToolError(name, result)` when a
    tool answered with an error result: the tool's `name` and its whole `result`; the
    message is the result's first text block.
    """

    def __init__(self, message: str, result: CallToolResult | None = None) -> None:
        self.name: str | None = None
        self.result: CallToolResult | None = result
        if result is not None:  # the client's form: `message` is the tool's name
            said = next(
                (text for block in result.content if (text := getattr(block, "text", ""))), ""
            )
            self.name = message
            message = f"tool {message!r} failed" + (f": {said}" if said else "")
        super().__init__(message)
        self.message = message
