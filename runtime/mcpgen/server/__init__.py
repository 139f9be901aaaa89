"""The server side of the public API: `Server` and what its handlers and middleware use.

`Server` (the decorators that register tools, resources, prompts and completions, and
`run`/`asgi_app` to serve them) is the layer over the sans-I/O protocol core,
`mcpgen._server`, which it builds. Its private modules hold what each part of the API
does: `_server` (the class: configuration, core, composition, serving) over `_features`
(its base class: the decorators, `add_*` and `remove_*`), `_registry` (a registration as
a function from one registry snapshot to the next), `_setup` (the constructor's checks
and stores), `_run` (stdio or uvicorn), `_mount`, `_transform` and `_apps` (composing
servers and deriving tools, the server side of the framework layer). Nothing here is
used by a client (`mcpgen.client`), and nothing here imports it. `mcpgen` exports the
same names.
"""

from __future__ import annotations

from mcpgen._server import CacheHint, Channel, Session
from mcpgen._server._apps import APP_MIME_TYPE, UI_EXTENSION
from mcpgen._server._call import RequestInfo
from mcpgen._server._content import (
    audio,
    embedded_blob,
    embedded_text,
    image,
    resource_link,
    structured,
    text,
    tool_error,
)
from mcpgen._server._context import (
    Context,
    InputRequired,
    elicit_form,
    elicit_url,
    list_roots,
    sample,
)
from mcpgen._server._defs import Header
from mcpgen._server._elicited import Elicited
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext, NotificationContext
from mcpgen.server._server import Server

__all__ = [
    "APP_MIME_TYPE",
    "CacheHint",
    "CallNext",
    "Channel",
    "Context",
    "Elicited",
    "Header",
    "InputRequired",
    "Middleware",
    "MiddlewareContext",
    "NotificationContext",
    "RequestInfo",
    "Server",
    "Session",
    "UI_EXTENSION",
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
    "tool_error",
]
