"""Transports: they move bytes and map outcomes onto their medium; they decide no
protocol rule (every rule lives in the sans-I/O core, `mcpgen._server`).

- `stdio`: newline-delimited JSON-RPC on stdin/stdout, asyncio pipes, no threads.
- `http`: Streamable HTTP as a plain ASGI 3 application (uvicorn by default).
- `memory`: an in-process connection to a server, for tests and embedding.
"""

from __future__ import annotations

from mcpgen.transports._http import (
    HttpOptions,
    InMemorySessionStore,
    McpAsgiApp,
    SessionStore,
    uvicorn_server,
)
from mcpgen.transports._memory import MemoryConnection
from mcpgen.transports._stdio import serve_stdio

__all__ = [
    "HttpOptions",
    "InMemorySessionStore",
    "McpAsgiApp",
    "MemoryConnection",
    "SessionStore",
    "serve_stdio",
    "uvicorn_server",
]
