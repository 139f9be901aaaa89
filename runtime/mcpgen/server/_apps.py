"""MCP Apps under a mount: a tool's link to its app and the app's own contents name
the mounted server's `ui://` URIs, so both are rewritten to the URIs the parent serves.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import msgspec

from mcpgen._server._apps import LEGACY_RESOURCE_URI_KEY
from mcpgen_types import latest as t

__all__ = ["linked_meta", "renamed_contents"]

_CONTENTS = (t.TextResourceContents, t.BlobResourceContents, t.ResourceContentsVariant)


def linked_meta(meta: Any, rename: Callable[[str], str]) -> Any:
    """A tool's `_meta` with its app link (`ui.resourceUri`, and the flat key early hosts
    read) renamed; anything else unchanged."""
    if not isinstance(meta, dict):
        return meta
    out = dict(meta)
    ui = out.get("ui")
    if isinstance(ui, dict) and isinstance(ui.get("resourceUri"), str):
        out["ui"] = {**ui, "resourceUri": rename(ui["resourceUri"])}
    if isinstance(out.get(LEGACY_RESOURCE_URI_KEY), str):
        out[LEGACY_RESOURCE_URI_KEY] = rename(out[LEGACY_RESOURCE_URI_KEY])
    return out


def _renamed(value: Any, own: str, served: str) -> Any:
    if isinstance(value, list):
        return [_renamed(item, own, served) for item in value]
    if isinstance(value, _CONTENTS) and value.uri == own:
        return msgspec.structs.replace(value, uri=served)
    return value


def renamed_contents(
    fn: Callable[..., Any], is_async: bool, own: str, served: str
) -> Callable[..., Any]:
    """A resource reader whose contents that name `own` (its URI in the mounted server)
    name `served` (the parent's) instead."""
    if is_async:

        @functools.wraps(fn)
        async def read_async(**kwargs: Any) -> Any:
            return _renamed(await fn(**kwargs), own, served)

        return read_async

    @functools.wraps(fn)
    def read(**kwargs: Any) -> Any:
        return _renamed(fn(**kwargs), own, served)

    return read
