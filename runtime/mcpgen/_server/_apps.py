"""MCP Apps (`io.modelcontextprotocol/ui`) on the server: what a UI resource and a tool
linked to one carry, and what a client declared.

An app is an HTML document served as a `ui://` resource with the MCP App MIME type; a
tool names it in `_meta.ui.resourceUri`, and a host that supports the extension renders
it in a sandboxed frame next to the tool's result. Everything here is data: the
resource's contents, the `_meta` of the tool and the resource, typed with the generated
`mcpgen_types.ext_apps` structs. The host-to-view protocol (`ui/*` over `postMessage`)
is the host's business, not the server's.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen_types import ext_apps as ui
from mcpgen_types import v2026_07_28 as t

__all__ = [
    "APP_MIME_TYPE",
    "LEGACY_RESOURCE_URI_KEY",
    "UI_EXTENSION",
    "AppSource",
    "app_contents",
    "app_reader",
    "app_tool_meta",
    "ui_capability",
]

UI_EXTENSION: str = ui.EXTENSION_ID
"""The MCP Apps extension's identifier (`io.modelcontextprotocol/ui`), as declared in
capabilities."""
APP_MIME_TYPE = "text/html;profile=mcp-app"
"""The MIME type of an MCP App's HTML document (a `ui://` resource hosts render)."""
# The flat key early hosts read before `_meta.ui` existed; written beside it.
LEGACY_RESOURCE_URI_KEY = "ui/resourceUri"

# The HTML itself, a file holding it (read at every read, so edits show), or a function
# returning it (sync or async).
AppSource = str | os.PathLike[str] | Callable[[], str | Awaitable[str]]


def _check_uri(uri: str, what: str) -> None:
    if not uri.startswith("ui://") or len(uri) <= len("ui://"):
        raise ConfigurationError(f"{what}: an app's URI uses the ui:// scheme, not {uri!r}")


def app_tool_meta(app: str | ui.McpUiToolMeta, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `_meta` of a tool linked to an app: the caller's own keys, `ui` (resource URI,
    visibility) and the flat key early hosts read."""
    link = ui.McpUiToolMeta(resource_uri=app) if isinstance(app, str) else app
    uri = link.resource_uri
    if not isinstance(uri, str):
        raise ConfigurationError("app=: McpUiToolMeta needs a resource_uri")
    _check_uri(uri, "app=")
    if link.visibility is not msgspec.UNSET and not link.visibility:
        raise ConfigurationError("app=: an empty visibility hides the tool from everyone")
    out = dict(meta or {})
    out["ui"] = {**out.get("ui", {}), **msgspec.to_builtins(link)}
    out[LEGACY_RESOURCE_URI_KEY] = uri
    return out


def app_contents(uri: str, html: str, meta: ui.McpUiResourceMeta | None) -> t.TextResourceContents:
    """One read of an app: its HTML with the MIME type and `_meta.ui` hosts look for."""
    return t.TextResourceContents(
        uri=uri,
        mime_type=APP_MIME_TYPE,
        text=html,
        meta={"ui": msgspec.to_builtins(meta)} if meta is not None else msgspec.UNSET,
    )


def app_reader(
    uri: str, source: AppSource, meta: ui.McpUiResourceMeta | None
) -> Callable[[], Awaitable[t.TextResourceContents]]:
    """The read function of an app resource (checked now: a missing file fails at
    registration, not at the first read)."""
    _check_uri(uri, "add_app_resource")
    if isinstance(source, str):

        async def static() -> t.TextResourceContents:
            return app_contents(uri, source, meta)

        return static
    if isinstance(source, os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise ConfigurationError(f"add_app_resource({uri!r}): no file at {path}")

        async def from_file() -> t.TextResourceContents:
            return app_contents(uri, path.read_text(encoding="utf-8"), meta)

        return from_file
    if not callable(source):
        raise ConfigurationError(f"add_app_resource({uri!r}): give HTML, a path or a function")
    produce = source

    async def computed() -> t.TextResourceContents:
        html = produce()
        if inspect.isawaitable(html):
            html = await html
        if not isinstance(html, str):
            raise TypeError(f"the app {uri!r} must produce HTML text, not {type(html).__name__}")
        return app_contents(uri, html, meta)

    return computed


def ui_capability(capabilities: Mapping[str, Any] | None) -> ui.McpUiClientCapabilities | None:
    """What a client declared of the Apps extension (None: it did not declare it, or
    declared it without the MCP App MIME type, so it cannot render an app)."""
    extensions = (capabilities or {}).get("extensions")
    declared = extensions.get(UI_EXTENSION) if isinstance(extensions, Mapping) else None
    if not isinstance(declared, Mapping):
        return None
    try:
        found = msgspec.convert(declared, ui.McpUiClientCapabilities)
    except msgspec.ValidationError:
        return None
    types = found.mime_types
    if types is msgspec.UNSET or APP_MIME_TYPE not in types:
        return None
    return found
