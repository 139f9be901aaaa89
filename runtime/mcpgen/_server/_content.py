"""Result builders (public through `mcpgen`) and the conversion of handler return values.

A tool may return a `CallToolResult`, a content block, a list of blocks, a string, or
any JSON-able value (a Struct, dataclass, dict, list, number ...): the latter becomes
`structuredContent` plus a text block carrying the same JSON, as the spec recommends
for clients that only read text. A tool that advertises an output schema always sends
`structuredContent` (clients refuse its result otherwise): whatever it returns, short
of a whole `CallToolResult`, is the structured value. Pydantic models inside a value are
dumped in JSON mode by their aliases, as their output schema describes them.
"""

from __future__ import annotations

import base64
import logging
import sys
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen._server._context import InputRequired
from mcpgen._server._masking import deliberate, report
from mcpgen_types import latest as t

__all__ = [
    "ArgumentsError",
    "audio",
    "embedded_blob",
    "embedded_text",
    "failure",
    "image",
    "resource_link",
    "structured",
    "text",
    "to_call_result",
    "tool_error",
    "tool_outcome",
]

CONTENT_TYPES = (t.TextContent, t.ImageContent, t.AudioContent, t.ResourceLink, t.EmbeddedResource)
_json = msgspec.json.Encoder()

log = logging.getLogger("mcpgen.server")


ARGUMENTS_GUIDANCE = "Check the tool's inputSchema and call it again with corrected arguments."


class ArgumentsError(ValueError):
    """A call's arguments do not fit the tool's input schema; the message says where
    and why, for the model to correct them (the call answers with a tool error)."""


def _dump_model(value: Any) -> Any:
    """msgspec's hook for values it cannot convert: pydantic models (pydantic is in
    `sys.modules` whenever such a value exists), in JSON mode, by alias."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    raise TypeError(f"Encoding objects of type {type(value).__name__} is unsupported")


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def _ann(annotations: t.Annotations | None) -> Any:
    return UNSET if annotations is None else annotations


def text(value: str, *, annotations: t.Annotations | None = None) -> t.TextContent:
    """A text content block."""
    return t.TextContent(text=value, annotations=_ann(annotations))


def image(
    data: bytes | str, mime_type: str, *, annotations: t.Annotations | None = None
) -> t.ImageContent:
    """An image block; `data` is raw bytes (encoded here) or already Base64."""
    return t.ImageContent(data=_b64(data), mime_type=mime_type, annotations=_ann(annotations))


def audio(
    data: bytes | str, mime_type: str, *, annotations: t.Annotations | None = None
) -> t.AudioContent:
    """An audio block; `data` is raw bytes (encoded here) or already Base64."""
    return t.AudioContent(data=_b64(data), mime_type=mime_type, annotations=_ann(annotations))


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> t.ResourceLink:
    """A link to a resource the client may read."""
    return t.ResourceLink(
        uri=uri,
        name=name,
        title=UNSET if title is None else title,
        description=UNSET if description is None else description,
        mime_type=UNSET if mime_type is None else mime_type,
        size=UNSET if size is None else size,
    )


def embedded_text(uri: str, value: str, mime_type: str | None = None) -> t.EmbeddedResource:
    """A resource embedded with its text."""
    contents = t.ResourceContentsVariant(uri=uri, text=value, mime_type=mime_type or UNSET)
    return t.EmbeddedResource(resource=contents)


def embedded_blob(uri: str, data: bytes | str, mime_type: str | None = None) -> t.EmbeddedResource:
    """A resource embedded with its binary contents (Base64 on the wire)."""
    contents = t.ResourceContentsVariant(uri=uri, blob=_b64(data), mime_type=mime_type or UNSET)
    return t.EmbeddedResource(resource=contents)


def structured(value: Any, *, summary: str | None = None) -> t.CallToolResult:
    """A result with `structuredContent`; the text block is `summary` or the JSON."""
    data = msgspec.to_builtins(value, enc_hook=_dump_model)
    shown = summary if summary is not None else _json.encode(data).decode()
    return t.CallToolResult(content=[text(shown)], structured_content=data)


def tool_error(message: str) -> t.CallToolResult:
    """A tool execution error the model can read and act on (`isError: true`)."""
    return t.CallToolResult(content=[text(message)], is_error=True)


def failure(name: str, exc: Exception, masked: bool) -> t.CallToolResult:
    """A tool handler's exception as the tool error the model sees (`_masking`): a
    raised `ToolError`'s message as written; anything else logged with its traceback
    and, masked, named by a reference only."""
    said = deliberate(exc)
    if said is not None:
        return tool_error(said)
    return tool_error(f"Tool {name!r} failed" + report(f"tool {name!r}", exc, masked))


def to_call_result(value: Any, tool: t.Tool | None = None) -> t.CallToolResult:
    """Whatever a tool handler returned, as a CallToolResult; when the `tool` definition
    has an output schema, the value is sent as `structuredContent`."""
    if tool is not None and tool.output_schema is not UNSET:
        return _structured_result(value)
    if type(value) is str:
        return t.CallToolResult(content=[t.TextContent(text=value)])
    if isinstance(value, t.CallToolResult):
        return value
    if isinstance(value, CONTENT_TYPES):
        return t.CallToolResult(content=[value])
    if value is None:
        return t.CallToolResult(content=[])
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, CONTENT_TYPES) for v in value)
    ):
        return t.CallToolResult(content=value if type(value) is list else list(value))
    return structured(value)


def _structured_result(value: Any) -> t.CallToolResult:
    if isinstance(value, t.CallToolResult):
        return value
    if type(value) is str:  # the text block shows the text itself, not its JSON string
        return t.CallToolResult(content=[t.TextContent(text=value)], structured_content=value)
    return structured(value)


def tool_outcome(value: Any, tool: t.Tool) -> t.CallToolResult | InputRequired:
    """What a call of `tool` answers with the handler's return value: its result, or
    the round of input requests it asked for."""
    return value if isinstance(value, InputRequired) else to_call_result(value, tool)
