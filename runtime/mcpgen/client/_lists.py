"""The client's reads that its `ResultCache` may answer: lists followed page by page,
and `resources/read`.

A page is kept under (method, cursor), a read under (method, uri), for as long as the
server's cache hint allows; `refresh` skips the cache and keeps the new answer. The
requests go out through the `request` function handed in (the `Client`'s own, looked
up at every call), so whatever wraps that method sees each request that leaves.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import msgspec
from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._client._cache import CacheKey, ResultCache
from mcpgen._errors import McpError
from mcpgen._wrap import unwrap_schema, wrapped
from mcpgen.client._connection import Connection, log
from mcpgen_types import latest as t
from mcpgen_types._base import UnsetType

__all__ = [
    "ReadResult",
    "Unwrapper",
    "cached",
    "concrete",
    "header_checked",
    "headers_known",
    "pages",
]

Request = Callable[[str, dict[str, Any]], Awaitable[msgspec.Struct]]


async def cached(
    cache: ResultCache, key: CacheKey, fetch: Callable[[], Awaitable[msgspec.Struct]], refresh: bool
) -> msgspec.Struct:
    """The cached answer for `key`, else (or with `refresh`) `fetch`'s, kept."""
    now = time.monotonic()
    hit = None if refresh else cache.get(key, now)
    if hit is not None:
        return hit
    result = await fetch()
    cache.put(key, result, now)
    return result


async def pages(
    cache: ResultCache,
    request: Request,
    method: str,
    field: str,
    cursor: str | None,
    all_pages: bool,
    refresh: bool,
) -> list[Any]:
    """The `field` items of `method`'s page at `cursor`, and, with `all_pages`, of every
    page after it."""
    items: list[Any] = []
    while True:
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}

        def fetch(p: dict[str, Any] = params) -> Awaitable[msgspec.Struct]:
            return request(method, p)

        page = await cached(cache, (method, cursor), fetch, refresh)
        items.extend(getattr(page, field))
        nxt = getattr(page, "next_cursor", None)
        if not all_pages or nxt is UNSET or nxt is None:
            return items
        cursor = nxt


def header_checked(connection: Connection, tools: list[t.Tool]) -> list[t.Tool]:
    """The tools an HTTP client may call: their header annotations (which arguments travel
    as headers) are kept on the connection; a tool whose annotations are invalid is
    dropped, with a warning."""
    kept = []
    for tool in tools:
        try:
            connection.tool_headers[tool.name] = proto.mcp_header_params(tool.input_schema)
        except ValueError as exc:
            log.warning("dropping tool %r: %s", tool.name, exc)
            continue
        kept.append(tool)
    return kept


async def headers_known(
    connection: Connection, tool: str, list_tools: Callable[[], Awaitable[object]]
) -> None:
    """Before calling `tool` over modern HTTP: list the tools once if its header
    annotations are not known yet (a failing list is left to the call to meet)."""
    if (
        connection.link.http
        and connection.core.era == "modern"
        and tool not in connection.tool_headers
    ):
        with contextlib.suppress(McpError):
            await list_tools()


class ReadResult(msgspec.Struct, kw_only=True):
    """What `Client.read_resource` returns: the `resources/read` result, its `contents`
    each a `TextResourceContents` or a `BlobResourceContents` (so `isinstance` tells
    them apart), where the wire type `ReadResourceResult` has one merged struct.

    A client-side view built from the decoded (generated) result: never decoded from
    the wire nor sent, so no message type of the runtime's own."""

    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")
    cache_scope: str | UnsetType = msgspec.field(default=UNSET, name="cacheScope")
    contents: list[t.TextResourceContents | t.BlobResourceContents]
    result_type: str = msgspec.field(default="complete", name="resultType")
    ttl_ms: int | UnsetType = msgspec.field(default=UNSET, name="ttlMs")


def _content(item: t.ResourceContentsVariant) -> t.TextResourceContents | t.BlobResourceContents:
    if item.blob is not UNSET and item.text is UNSET:
        return t.BlobResourceContents(
            uri=item.uri, blob=item.blob, mime_type=item.mime_type, meta=item.meta
        )
    text = "" if item.text is UNSET else item.text
    return t.TextResourceContents(uri=item.uri, text=text, mime_type=item.mime_type, meta=item.meta)


def concrete(result: t.ReadResourceResult) -> ReadResult:
    """`result` with each merged contents struct as the text or blob one it is."""
    return ReadResult(
        meta=result.meta,
        cache_scope=result.cache_scope,
        contents=[_content(item) for item in result.contents],
        result_type=result.result_type,
        ttl_ms=result.ttl_ms,
    )


class Unwrapper:
    """A client's view of tools whose non-object results an older revision's session
    wraps as `{"result": ...}` (`mcpgen._wrap`): their listed schemas and their results
    are unwrapped, so what the client sees does not depend on the era."""

    def __init__(self) -> None:
        self.listed: set[str] = set()
        self.wrapped: set[str] = set()

    def tools(self, tools: list[t.Tool]) -> list[t.Tool]:
        return [self._tool(tool) for tool in tools]

    def _tool(self, tool: t.Tool) -> t.Tool:
        self.listed.add(tool.name)
        if not wrapped(tool.output_schema):
            self.wrapped.discard(tool.name)
            return tool
        self.wrapped.add(tool.name)
        schema = unwrap_schema(cast(dict[str, Any], tool.output_schema))
        return msgspec.structs.replace(tool, output_schema=schema)

    async def result(
        self, name: str, result: t.CallToolResult, list_tools: Callable[[], Awaitable[object]]
    ) -> t.CallToolResult:
        """`result` unwrapped when its tool's is (the tools are listed first when this
        one was not)."""
        content = result.structured_content
        if not (isinstance(content, dict) and content.keys() == {"result"}):
            return result
        if name not in self.listed:
            with contextlib.suppress(McpError):
                await list_tools()
        if name not in self.wrapped:
            return result
        return msgspec.structs.replace(result, structured_content=content["result"])
