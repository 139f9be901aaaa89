"""Registry entries that forward to the upstream: what the proxy's `Server` serves.

Each upstream tool, resource, template and prompt becomes a registry entry whose
definition is the upstream's own (passed through, never regenerated) and whose handler
forwards the request through the `InputBridge`. Arguments pass through unvalidated:
the upstream validates them against the schema it published.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote

import msgspec

from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._arguments import header_params
from mcpgen._server._context import Context
from mcpgen._server._defs import CompletionDef, PromptDef, ResourceDef, TemplateDef, ToolDef
from mcpgen._server._templates import UriTemplate
from mcpgen.client._client import Client
from mcpgen.proxy._input import InputBridge, Progress
from mcpgen_types import latest as t
from mcpgen_types.latest import INVALID_PARAMS

__all__ = [
    "completion_def",
    "prompt_def",
    "resource_def",
    "template_def",
    "tool_def",
    "unlisted_def",
]

log = logging.getLogger("mcpgen.proxy")

Pick = Callable[[Context], Awaitable[Client]]  # the upstream client serving a caller

_CTX = "__mcpgen_proxy_context"  # the handler's context parameter; no JSON argument name
_EXPR = re.compile(r"\{([^{}]*)\}")
_LEGACY_NOT_FOUND = -32002  # resources/read of an unknown URI before 2026-07-28
_JOIN = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}


class _AsIs:
    """The arguments as sent: the upstream validates them."""

    __slots__ = ()

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        return dict(arguments)


def tool_def(pick: Pick, bridge: InputBridge, tool: t.Tool, prefix: str = "") -> ToolDef | None:
    """The proxy's entry for an upstream tool, served as `prefix + tool.name` (None: its
    header annotations are invalid)."""
    name = tool.name

    async def forward(**arguments: Any) -> Any:
        ctx: Context = arguments.pop(_CTX)
        upstream = await pick(ctx)  # here, not in the call's task: its context is the call's

        def start(progress: Progress) -> Any:
            return upstream.call_tool(name, arguments, progress=progress)

        return await bridge.forward(ctx, start)

    try:
        headers = header_params(name, tool.input_schema)
    except ConfigurationError as exc:
        log.warning("not serving upstream tool %r: %s", name, exc)
        return None
    return ToolDef(
        name=prefix + name,
        fn=forward,
        is_async=True,
        definition=msgspec.structs.replace(tool, name=prefix + name) if prefix else tool,
        args_type=None,
        validator=_AsIs(),
        context_param=_CTX,
        headers=headers,
    )


def _reader(pick: Pick, bridge: InputBridge, uri_of: Callable[..., str]) -> Any:
    async def read(**variables: Any) -> Any:
        ctx: Context = variables.pop(_CTX)
        uri = uri_of(**variables)
        upstream = await pick(ctx)

        def start(progress: Progress) -> Any:
            return upstream.request("resources/read", {"uri": uri}, progress=progress)

        try:
            return await bridge.forward(ctx, start)
        except McpError as exc:
            if exc.code == _LEGACY_NOT_FOUND and ctx.era == "modern":
                # The revisions since 2026-07-28 say "not found" with invalid-params.
                raise McpError(INVALID_PARAMS, exc.message, exc.data) from None
            raise

    return read


def resource_def(pick: Pick, bridge: InputBridge, resource: t.Resource) -> ResourceDef:
    uri = resource.uri
    fn = _reader(pick, bridge, lambda: uri)
    return ResourceDef(uri, resource, fn, is_async=True, context_param=_CTX)


def unlisted_def(pick: Pick, bridge: InputBridge) -> TemplateDef:
    """Reads of URIs the upstream did not list, sent upstream as they are: a resource
    link a tool returns may name a resource no list shows, or one made since the proxy
    last listed (a list-changed notification is still on its way)."""
    fn = _reader(pick, bridge, lambda uri: uri)
    definition = t.ResourceTemplate(name="unlisted", uri_template="{+uri}")
    return TemplateDef(UriTemplate("{+uri}"), definition, fn, is_async=True, context_param=_CTX)


def expand(template: str, values: Mapping[str, str]) -> str:
    """An RFC 6570 expansion of `template` (levels 1-3) with the matched `values`."""

    def one(m: re.Match[str]) -> str:
        body = m.group(1)
        op = body[:1] if body[:1] in _JOIN and body[:1] not in ("", ",") else ""
        names = [n.rstrip("*").split(":")[0] for n in body[len(op) :].split(",")]
        safe = ":/?#[]@!$&'()*+,;=" if op in ("+", "#") else ""
        found = [(n, quote(values[n], safe=safe)) for n in names if n in values]
        if not found:
            return ""
        if op in ("?", "&", ";"):
            parts = [f"{n}={v}" if v or op != ";" else n for n, v in found]
        else:
            parts = [v for _, v in found]
        lead = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}[op]
        return lead + _JOIN[op].join(parts)

    return _EXPR.sub(one, template)


def template_def(
    pick: Pick, bridge: InputBridge, template: t.ResourceTemplate
) -> TemplateDef | None:
    try:
        matcher = UriTemplate(template.uri_template)
    except ConfigurationError as exc:
        log.warning("not serving upstream template %r: %s", template.uri_template, exc)
        return None
    text = template.uri_template
    fn = _reader(pick, bridge, lambda **values: expand(text, values))
    return TemplateDef(matcher, template, fn, is_async=True, context_param=_CTX)


def prompt_def(pick: Pick, bridge: InputBridge, prompt: t.Prompt, prefix: str = "") -> PromptDef:
    name = prompt.name
    declared = prompt.arguments if prompt.arguments is not msgspec.UNSET else []
    required = tuple(a.name for a in declared if a.required is True)

    async def forward(**arguments: Any) -> Any:
        ctx: Context = arguments.pop(_CTX)
        upstream = await pick(ctx)
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments

        def start(progress: Progress) -> Any:
            return upstream.request("prompts/get", params, progress=progress)

        return await bridge.forward(ctx, start)

    return PromptDef(
        prefix + name,
        msgspec.structs.replace(prompt, name=prefix + name) if prefix else prompt,
        forward,
        is_async=True,
        context_param=_CTX,
        required=required,
        accepted=frozenset(a.name for a in declared),
    )


def completion_def(upstream: Client) -> CompletionDef:
    """Every completion request goes upstream, its result passed through."""

    async def complete(
        ref: t.PromptReference | t.ResourceTemplateReference,
        argument: str,
        value: str,
        context: dict[str, str],
    ) -> Any:
        return await upstream.complete(msgspec.to_builtins(ref), argument, value, context)

    return CompletionDef(complete, is_async=True)
