"""The client side of the public API: `Client` and what its callers and hooks use.

    async with Client.stdio(["python", "server.py"]) as client:   # or .http / .sse / .memory
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"text": "hi"})

Era `auto` (default) probes with `server/discover` and falls back to `initialize`
for legacy servers (over HTTP, then to the deprecated HTTP+SSE transport if the
endpoint refuses POSTs); `modern` pins 2026-07-28; `legacy` goes straight to the
handshake. Input requests (elicitation, sampling, roots) are answered by the
callbacks you pass, whether they arrive as input-required results (modern) or as
server-to-client requests (legacy). Tasks (the `io.modelcontextprotocol/tasks`
extension, and 2025-11-25 servers' core tasks): `call_tool(..., task=True)` may return
a `ToolTask`; a tool that runs only as a task is run as one and waited for.

`Client` is the layer over the sans-I/O protocol core, `mcpgen._client`. Its private
modules: `_client` (the class: made per transport, connected) over `_requests` (its base
class: what it asks of a server), `_connection` (the I/O loop: ids, waiting requests,
timeouts) and `_era_selection` (the probe, the handshake, cached verdicts), `_callbacks`
(the user's callbacks), `_lists` (cached reads, lists page by page), `_tasks`, `_listen`
(change notifications in either era), `_apps` (MCP Apps), `_options` (the constructors'
keywords) and `_middleware` (`ClientMiddleware` and `RetryPolicy`, the client side of
the framework layer: installed on a connection only when configured). Nothing here
imports the server package (`mcpgen.server`). `mcpgen` exports the same names, loading
this package on first use (a server does not pay for the client).
"""

from __future__ import annotations

from mcpgen._client import TaskCancelledError, TaskFailedError, VerdictCache
from mcpgen.client._apps import App, tool_app
from mcpgen.client._callbacks import (
    CallbackError,
    ElicitationCallback,
    LogCallback,
    ProgressCallback,
    RootsCallback,
    SamplingCallback,
)
from mcpgen.client._client import Client
from mcpgen.client._lists import ReadResult
from mcpgen.client._middleware import ClientCallNext, ClientMiddleware, ClientRequest, RetryPolicy
from mcpgen.client._tasks import ToolTask

__all__ = [
    "App",
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
    "tool_app",
]
