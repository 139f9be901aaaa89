"""MCP Apps on the client side: which tools have an app, and the app itself.

A client that shows apps declares the extension (`Client(apps=True)`); servers may then
answer its calls with results meant for a view. `tool_app` reads a tool's link (the
`_meta.ui` object, or the flat key early servers wrote) and `read_app` fetches the HTML
with what the server asks of the frame, both typed from `mcpgen_types.ext_apps`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from mcpgen._errors import McpError
from mcpgen._server._apps import APP_MIME_TYPE, LEGACY_RESOURCE_URI_KEY, UI_EXTENSION
from mcpgen_types import ext_apps as ui
from mcpgen_types import latest as t

__all__ = ["App", "app_capabilities", "declared", "read_app", "tool_app"]


class App(msgspec.Struct, frozen=True, kw_only=True):
    """An MCP App as read from its server: the HTML a host renders in a sandboxed frame,
    and what the server asks of that frame (`ui`: CSP domains, permissions, ...)."""

    uri: str
    html: str
    ui: ui.McpUiResourceMeta | None = None


def tool_app(tool: t.Tool) -> ui.McpUiToolMeta | None:
    """The app a tool is linked to (its `ui://` resource and who may call it), or None."""
    meta: dict[str, Any] = tool.meta if isinstance(tool.meta, dict) else {}
    link = meta.get("ui")
    found: ui.McpUiToolMeta | None = None
    if isinstance(link, dict):
        try:
            found = msgspec.convert(link, ui.McpUiToolMeta)
        except msgspec.ValidationError:
            found = None
    legacy = meta.get(LEGACY_RESOURCE_URI_KEY)
    if (found is None or found.resource_uri is msgspec.UNSET) and isinstance(legacy, str):
        found = msgspec.structs.replace(found or ui.McpUiToolMeta(), resource_uri=legacy)
    if found is None or not isinstance(found.resource_uri, str):
        return None
    return found


class _Read(Protocol):
    """A `resources/read` result: the wire type, or the client's `ReadResult`."""

    @property
    def contents(self) -> Sequence[Any]: ...


async def read_app(read: Callable[[str], Awaitable[_Read]], app: str | t.Tool) -> App:
    """Read an app (with `read`, a client's `read_resource`) by its `ui://` URI or
    through a tool linked to one."""
    if isinstance(app, str):
        uri = app
    else:
        link = tool_app(app)
        if link is None or not isinstance(link.resource_uri, str):
            raise McpError(-32602, f"the tool {app.name!r} has no app")
        uri = link.resource_uri
    result = await read(uri)
    for item in result.contents:
        text = getattr(item, "text", None)  # the merged contents type, or the text one
        if item.mime_type == APP_MIME_TYPE and isinstance(text, str):
            return App(uri=item.uri, html=text, ui=_ui_of(item.meta))
    raise McpError(-32002, f"{uri!r} holds no {APP_MIME_TYPE} document")


def _ui_of(meta: Any) -> ui.McpUiResourceMeta | None:
    found = meta.get("ui") if isinstance(meta, dict) else None
    if not isinstance(found, dict):
        return None
    try:
        return msgspec.convert(found, ui.McpUiResourceMeta)
    except msgspec.ValidationError:
        return None


def app_capabilities() -> dict[str, Any]:
    """The extension entry a client that renders apps declares."""
    return {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}


def declared(
    capabilities: tuple[dict[str, Any], dict[str, Any]],
    apps: bool,
    extensions: Mapping[str, Mapping[str, Any]] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A client's (modern, legacy) capabilities with the extensions the application
    handles itself (`apps=True`: it renders MCP Apps)."""
    caps, legacy = capabilities
    wanted = {**(app_capabilities() if apps else {}), **(extensions or {})}
    if wanted:
        caps["extensions"] = legacy["extensions"] = {k: dict(v) for k, v in wanted.items()}
    return caps, legacy
