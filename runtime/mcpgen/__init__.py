"""mcpgen: a code-generated, typed and fast Model Context Protocol SDK.

The protocol types of every pinned revision live in `mcpgen_types` (generated from
the upstream JSON Schemas); `mcpgen.types` re-exports the newest modern revision.
`Server` serves both eras (2026-07-28 stateless requests and `initialize` sessions);
`Client` talks to servers of either era over stdio, Streamable HTTP or in memory.
The names of each side are also in `mcpgen.server` and `mcpgen.client`; this package
exports both, with the error types they share and the proxy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpgen._errors import (
    ClientError,
    ConfigurationError,
    ConnectError,
    ConnectionClosedError,
    HttpStatusError,
    McpError,
    ProtocolViolationError,
    RequestTimeoutError,
    ToolError,
    TransportError,
    TransportTimeoutError,
)
from mcpgen.server import (
    APP_MIME_TYPE,
    UI_EXTENSION,
    CacheHint,
    CallNext,
    Channel,
    Context,
    Elicited,
    Header,
    InputRequired,
    Middleware,
    MiddlewareContext,
    NotificationContext,
    RequestInfo,
    Server,
    Session,
    audio,
    elicit_form,
    elicit_url,
    embedded_blob,
    embedded_text,
    image,
    list_roots,
    resource_link,
    sample,
    structured,
    text,
    tool_error,
)

__all__ = [
    "APP_MIME_TYPE",
    "App",
    "CacheHint",
    "CallNext",
    "CallbackError",
    "Channel",
    "Client",
    "ClientCallNext",
    "ClientError",
    "ClientMiddleware",
    "ClientRequest",
    "ConfigurationError",
    "ConnectError",
    "ConnectionClosedError",
    "Context",
    "ElicitationCallback",
    "Elicited",
    "Header",
    "HttpStatusError",
    "InputRequired",
    "LogCallback",
    "McpError",
    "Middleware",
    "MiddlewareContext",
    "NotificationContext",
    "ProgressCallback",
    "ProtocolViolationError",
    "Proxy",
    "ReadResult",
    "RequestInfo",
    "RequestTimeoutError",
    "RetryPolicy",
    "RootsCallback",
    "SamplingCallback",
    "Server",
    "Session",
    "TaskCancelledError",
    "TaskFailedError",
    "ToolError",
    "ToolTask",
    "TransportError",
    "TransportTimeoutError",
    "UI_EXTENSION",
    "VerdictCache",
    "__version__",
    "audio",
    "elicit_form",
    "elicit_url",
    "embedded_blob",
    "embedded_text",
    "image",
    "list_roots",
    "resource_link",
    "sample",
    "structured",
    "text",
    "tool_app",
    "tool_error",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from mcpgen.client import (
        App,
        CallbackError,
        Client,
        ClientCallNext,
        ClientMiddleware,
        ClientRequest,
        ElicitationCallback,
        LogCallback,
        ProgressCallback,
        ReadResult,
        RetryPolicy,
        RootsCallback,
        SamplingCallback,
        TaskCancelledError,
        TaskFailedError,
        ToolTask,
        VerdictCache,
        tool_app,
    )
    from mcpgen.proxy import Proxy

_CLIENT_SIDE = frozenset(
    {
        "App",
        "tool_app",
        "CallbackError",
        "Client",
        "ClientCallNext",
        "ClientMiddleware",
        "ClientRequest",
        "ElicitationCallback",
        "LogCallback",
        "ProgressCallback",
        "ReadResult",
        "RetryPolicy",
        "RootsCallback",
        "SamplingCallback",
        "TaskCancelledError",
        "TaskFailedError",
        "ToolTask",
        "VerdictCache",
    }
)


def __getattr__(name: str) -> Any:
    if name == "Proxy":  # loaded on first use, as the client side it is built on
        from mcpgen.proxy import Proxy  # noqa: PLC0415 (lazy)

        globals()["Proxy"] = Proxy
        return Proxy
    if name in _CLIENT_SIDE:  # loaded on first use: a server does not pay for the client
        from mcpgen import client  # noqa: PLC0415 (lazy)

        globals()[name] = value = getattr(client, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
