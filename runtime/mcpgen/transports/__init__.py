"""Transports: they move bytes and map outcomes onto their medium; they decide no
protocol rule (every rule lives in the sans-I/O core, `mcpgen._server`).

- `stdio`: newline-delimited JSON-RPC on stdin/stdout, asyncio pipes, no threads.
- `http`: Streamable HTTP as a plain ASGI 3 application (uvicorn by default).
- `memory`: an in-process connection to a server, for tests and embedding.

Writing a transport of your own takes only the names below. Subclass `Channel` for a
connection: `notify(frame)` writes one frame to the peer (`request` and `reply` go the
same way unless overridden), `spawn(coro)` starts a task and returns it. Open a
session with `server.session(channel)` (any `ServerPort`, e.g. `mcpgen.Server`), then
for each frame the peer sends::

    deliver(session.receive(frame, channel), channel)

and `session.close()` when the connection ends. `receive` returns an `Outcome`: reply
bytes, None, `DEFERRED` (the reply comes later through `channel.reply`) or `Pending`
work, which `deliver` runs through `channel.spawn`, tying the request's cancellation to
it; a transport that must choose a response per request (as HTTP does) can look at the
outcome first and at the `Handle` `deliver` returns, whose result is the `Settled`
outcome. `receive` never raises: a failure inside the core comes back as a JSON-RPC
internal-error reply.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpgen._server import (
    DEFERRED,
    Channel,
    Deferred,
    Handle,
    Outcome,
    Pending,
    Settled,
    deliver,
    settle,
)
from mcpgen.transports._port import ServerPort, SessionPort

if TYPE_CHECKING:
    from mcpgen.transports._http import (
        HttpOptions,
        InMemorySessionStore,
        McpAsgiApp,
        SessionStore,
        uvicorn_server,
    )
    from mcpgen.transports._memory import MemoryConnection
    from mcpgen.transports._stdio import serve_stdio

# Each transport is imported when first used: a stdio server never loads the HTTP one.
_WHERE = {
    "HttpOptions": "_http",
    "InMemorySessionStore": "_http",
    "McpAsgiApp": "_http",
    "SessionStore": "_http",
    "uvicorn_server": "_http",
    "MemoryConnection": "_memory",
    "serve_stdio": "_stdio",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFERRED",
    "Channel",
    "Deferred",
    "Handle",
    "HttpOptions",
    "InMemorySessionStore",
    "McpAsgiApp",
    "MemoryConnection",
    "Outcome",
    "Pending",
    "ServerPort",
    "SessionPort",
    "SessionStore",
    "Settled",
    "deliver",
    "serve_stdio",
    "settle",
    "uvicorn_server",
]
