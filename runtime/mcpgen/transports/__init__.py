"""Transports: they move bytes and map outcomes onto their medium; they decide no
protocol rule (every rule lives in the sans-I/O core, `mcpgen._server`).

- `stdio`: newline-delimited JSON-RPC on stdin/stdout, asyncio pipes, no threads.
- `http`: Streamable HTTP as a plain ASGI 3 application (uvicorn by default).
- `memory`: an in-process connection to a server, for tests and embedding.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "HttpOptions",
    "InMemorySessionStore",
    "McpAsgiApp",
    "MemoryConnection",
    "SessionStore",
    "serve_stdio",
    "uvicorn_server",
]
