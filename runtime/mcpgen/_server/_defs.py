"""Registry entries built from user functions: tools, resources, templates, prompts,
completions. Everything here runs at registration time; the call path only reads the
frozen results (decoders, schemas, header maps). How a signature becomes arguments and
schemas lives in `_arguments`."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._server._arguments import (
    EMPTY,
    Header,
    argument_description,
    header_params,
    raw_validator,
    return_schema,
    signature,
    typed_shape,
)
from mcpgen._server._templates import UriTemplate
from mcpgen_types import latest as t

__all__ = [
    "CompletionDef",
    "Header",
    "PromptDef",
    "ResourceDef",
    "TemplateDef",
    "ToolDef",
    "build_completion",
    "build_prompt",
    "build_resource",
    "build_template",
    "build_tool",
]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


class ToolDef(msgspec.Struct, frozen=True):
    name: str
    fn: Callable[..., Any]
    is_async: bool
    definition: t.Tool
    args_type: type | None  # the Struct typed arguments convert into
    validator: Any  # jsonschema-rs validator for a raw input schema, else None
    context_param: str | None
    headers: Mapping[str, tuple[str, str]]  # lower-case header name -> (property, JSON type)
    task: str | None = None  # "optional" | "required": may run as a task (Tasks extension)
    detach: bool = False  # runs in the request until `await ctx.detach()`


class ResourceDef(msgspec.Struct, frozen=True):
    uri: str
    definition: t.Resource
    fn: Callable[..., Any] | None
    is_async: bool
    context_param: str | None
    static: Any = None  # str | bytes when registered without a reader


class TemplateDef(msgspec.Struct, frozen=True):
    template: UriTemplate
    definition: t.ResourceTemplate
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None


class PromptDef(msgspec.Struct, frozen=True):
    name: str
    definition: t.Prompt
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None
    required: tuple[str, ...] = ()
    accepted: frozenset[str] = msgspec.field(default_factory=frozenset)


class CompletionDef(msgspec.Struct, frozen=True):
    fn: Callable[..., Any]
    is_async: bool


def build_tool(
    fn: Callable[..., Any],
    context_type: type,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: t.ToolAnnotations | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    icons: list[t.Icon] | None = None,
    meta: dict[str, Any] | None = None,
    task: str | None = None,
    detach: bool = False,
) -> ToolDef:
    tool_name = name or fn.__name__
    if not _TOOL_NAME.match(tool_name):
        raise ConfigurationError(f"tool name {tool_name!r}: use 1-128 of A-Z a-z 0-9 _ - .")
    if task not in (None, "optional", "required"):
        raise ConfigurationError(f"tool {tool_name!r}: task must be 'optional' or 'required'")
    if detach and (task is None or not inspect.iscoroutinefunction(fn)):
        raise ConfigurationError(
            f"tool {tool_name!r}: detach=True needs task='optional' or 'required' and an "
            "async handler (it awaits ctx.detach())"
        )
    if input_schema is not None:
        _, hints, ctx = signature(fn, context_type)
        args_type, validator = None, raw_validator(tool_name, input_schema)
        schema = dict(input_schema)
        auto_output = return_schema(hints.get("return", EMPTY))
    else:
        try:
            shape = typed_shape(fn, context_type)
        except TypeError as exc:
            raise ConfigurationError(
                f"tool {tool_name!r}: unsupported parameter type: {exc}"
            ) from None
        ctx, args_type, validator = shape.ctx, shape.args_type, None
        schema, auto_output = dict(shape.schema), shape.output_schema
    if output_schema is None:
        output_schema = auto_output
    definition = t.Tool(
        name=tool_name,
        title=_opt(title),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        input_schema=schema,
        output_schema=_opt(output_schema),
        annotations=_opt(annotations),
        icons=_opt(icons),
        meta=_opt(meta),
    )
    return ToolDef(
        name=tool_name,
        fn=fn,
        is_async=inspect.iscoroutinefunction(fn),
        definition=definition,
        args_type=args_type,
        validator=validator,
        context_param=ctx,
        headers=header_params(tool_name, schema),
        task=task,
        detach=detach,
    )


def build_resource(
    uri: str,
    fn: Callable[..., Any] | None,
    context_type: type,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: t.Annotations | None = None,
    icons: list[t.Icon] | None = None,
    meta: dict[str, Any] | None = None,
    static: str | bytes | None = None,
) -> ResourceDef:
    if "{" in uri:
        raise ConfigurationError(f"resource {uri!r} looks like a template: use resource_template()")
    ctx = signature(fn, context_type)[2] if fn is not None else None
    definition = t.Resource(
        uri=uri,
        name=name or (fn.__name__ if fn is not None else uri),
        title=_opt(title),
        description=_opt(
            description if description is not None or fn is None else inspect.getdoc(fn)
        ),
        mime_type=_opt(mime_type),
        size=_opt(
            size
            if size is not None or static is None
            else len(static.encode() if isinstance(static, str) else static)
        ),
        annotations=_opt(annotations),
        icons=_opt(icons),
        meta=_opt(meta),
    )
    return ResourceDef(uri, definition, fn, inspect.iscoroutinefunction(fn), ctx, static)


def build_template(
    uri_template: str,
    fn: Callable[..., Any],
    context_type: type,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    annotations: t.Annotations | None = None,
    icons: list[t.Icon] | None = None,
    meta: dict[str, Any] | None = None,
) -> TemplateDef:
    template = UriTemplate(uri_template)
    params, _, ctx = signature(fn, context_type)
    names = {p.name for p in params}
    missing = [v for v in template.variables if v not in names]
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    if missing and not has_kwargs:
        raise ConfigurationError(
            f"template {uri_template!r}: {fn.__name__} lacks parameters {missing}"
        )
    definition = t.ResourceTemplate(
        uri_template=uri_template,
        name=name or fn.__name__,
        title=_opt(title),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        mime_type=_opt(mime_type),
        annotations=_opt(annotations),
        icons=_opt(icons),
        meta=_opt(meta),
    )
    return TemplateDef(template, definition, fn, inspect.iscoroutinefunction(fn), ctx)


def build_prompt(
    fn: Callable[..., Any],
    context_type: type,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    icons: list[t.Icon] | None = None,
    meta: dict[str, Any] | None = None,
) -> PromptDef:
    params, hints, ctx = signature(fn, context_type)
    arguments = [
        t.PromptArgument(
            name=p.name,
            required=p.default is inspect.Parameter.empty,
            description=_opt(argument_description(hints.get(p.name))),
        )
        for p in params
    ]
    definition = t.Prompt(
        name=name or fn.__name__,
        title=_opt(title),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        arguments=arguments or UNSET,
        icons=_opt(icons),
        meta=_opt(meta),
    )
    required = tuple(p.name for p in params if p.default is inspect.Parameter.empty)
    return PromptDef(
        definition.name,
        definition,
        fn,
        inspect.iscoroutinefunction(fn),
        ctx,
        required,
        frozenset(p.name for p in params),
    )


def build_completion(fn: Callable[..., Any]) -> CompletionDef:
    return CompletionDef(fn, inspect.iscoroutinefunction(fn))
