"""Registry entries built from user functions: tools, resources, templates, prompts,
completions. Everything here runs at registration time; the call path only reads the
frozen results (decoders, schemas, header maps)."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, get_args, get_origin

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._protocol import mcp_header_params
from mcpgen._server._content import CONTENT_TYPES
from mcpgen._server._context import InputRequired
from mcpgen._server._templates import UriTemplate
from mcpgen_types import latest as t

jsonschema_rs: Any
try:  # raw JSON Schema tools are validated with jsonschema-rs (the `validation` extra)
    import jsonschema_rs
except ImportError:  # pragma: no cover - depends on the environment
    jsonschema_rs = None

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


@dataclass(frozen=True)
class Header:
    """Mirror a tool argument into an `Mcp-Param-<name>` HTTP header:
    `region: Annotated[str, Header("Region")]`."""

    name: str


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


@dataclass(frozen=True, slots=True)
class ToolDef:
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


@dataclass(frozen=True, slots=True)
class ResourceDef:
    uri: str
    definition: t.Resource
    fn: Callable[..., Any] | None
    is_async: bool
    context_param: str | None
    static: Any = None  # str | bytes when registered without a reader


@dataclass(frozen=True, slots=True)
class TemplateDef:
    template: UriTemplate
    definition: t.ResourceTemplate
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None


@dataclass(frozen=True, slots=True)
class PromptDef:
    name: str
    definition: t.Prompt
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None
    required: tuple[str, ...] = ()
    accepted: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class CompletionDef:
    fn: Callable[..., Any]
    is_async: bool


# -- signatures --------------------------------------------------------------------------
def _signature(
    fn: Callable[..., Any], context_type: type
) -> tuple[list[inspect.Parameter], dict[str, Any], str | None]:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError:
        # Postponed annotations naming something local to the function that defined the
        # handler (a factory, a test): resolve them with the locals of the callers.
        hints = _hints_with_caller_locals(fn)
    params, ctx = [], None
    for p in inspect.signature(fn).parameters.values():
        annotation = hints.get(p.name, Any)
        if isinstance(annotation, type) and issubclass(annotation, context_type):
            ctx = p.name
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind is p.POSITIONAL_ONLY:
            raise ConfigurationError(
                f"{fn.__name__}: positional-only parameter {p.name!r} cannot be bound from JSON"
            )
        params.append(p)
    return params, hints, ctx


def _hints_with_caller_locals(fn: Callable[..., Any]) -> dict[str, Any]:
    localns: dict[str, Any] = {}
    frame = inspect.currentframe()
    for _ in range(12):
        if frame is None:
            break
        localns = {**frame.f_locals, **localns}
        frame = frame.f_back
    try:
        return typing.get_type_hints(fn, localns=localns, include_extras=True)
    except Exception as exc:
        raise ConfigurationError(f"cannot resolve the annotations of {fn!r}: {exc}") from None


def _with_header_meta(annotation: Any) -> Any:
    """Turn a Header marker inside Annotated[...] into the x-mcp-header schema keyword."""
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *extras = get_args(annotation)
    out = []
    for extra in extras:
        if isinstance(extra, Header):
            out.append(msgspec.Meta(extra_json_schema={"x-mcp-header": extra.name}))
        else:
            out.append(extra)
    return Annotated[(base, *out)] if out else base


def _object_schema(struct: type) -> dict[str, Any]:
    (top,), components = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    schema = components.pop(top["$ref"].split("/")[-1])
    schema.pop("title", None)
    schema.setdefault("properties", {})
    if not schema.get("required", True):
        del schema["required"]
    if components:
        schema["$defs"] = components
    return dict(schema)


def _output_schema(annotation: Any) -> dict[str, Any] | None:
    """Schema for a return annotation that produces structuredContent, else None."""
    if annotation in (inspect.Signature.empty, Any, None, type(None), str):
        return None
    plain = (
        get_args(annotation)
        if get_origin(annotation) in (typing.Union, __import__("types").UnionType)
        else (annotation,)
    )
    skip = (*CONTENT_TYPES, t.CallToolResult, InputRequired)
    for member in plain:
        if member is InputRequired or (isinstance(member, type) and issubclass(member, skip)):
            return None
        if (
            get_origin(member) is list
            and get_args(member)
            and isinstance(get_args(member)[0], type)
            and issubclass(get_args(member)[0], CONTENT_TYPES)
        ):
            return None
    try:
        (top,), components = msgspec.json.schema_components(
            [annotation], ref_template="#/$defs/{name}"
        )
    except TypeError:
        return None
    if "$ref" in top and len(top) == 1:
        schema = dict(components.pop(top["$ref"].split("/")[-1]))
        schema.pop("title", None)
    else:
        schema = dict(top)
    if components:
        schema["$defs"] = components
    return schema


# -- builders ------------------------------------------------------------------------------
def _header_params(tool_name: str, schema: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    try:
        return mcp_header_params(schema)
    except ValueError as exc:
        raise ConfigurationError(f"tool {tool_name!r}: {exc}") from None


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
    params, hints, ctx = _signature(fn, context_type)
    args_type, validator = None, None
    if input_schema is not None:
        if input_schema.get("type") != "object":
            raise ConfigurationError(
                f"tool {tool_name!r}: inputSchema needs type 'object' at its root"
            )
        if jsonschema_rs is None:
            raise ConfigurationError(
                f"tool {tool_name!r} has a raw JSON Schema: validating it needs jsonschema-rs "
                "(pip install 'mcpgen[validation]'), or declare typed parameters instead"
            )
        try:
            validator = jsonschema_rs.validator_for(input_schema)
        except Exception as exc:
            raise ConfigurationError(f"tool {tool_name!r}: invalid inputSchema: {exc}") from None
        schema = dict(input_schema)
    else:
        fields: list[tuple[Any, ...]] = []
        for p in params:
            annotation = _with_header_meta(hints.get(p.name, Any))
            if p.default is inspect.Parameter.empty:
                fields.append((p.name, annotation))
            else:
                fields.append((p.name, annotation, p.default))
        args_type = msgspec.defstruct(f"{tool_name}_arguments", fields, kw_only=True)
        try:
            msgspec.json.Decoder(args_type)  # rejects unsupported parameter types now
            schema = _object_schema(args_type)
        except TypeError as exc:
            raise ConfigurationError(
                f"tool {tool_name!r}: unsupported parameter type: {exc}"
            ) from None
        if not params:
            schema["additionalProperties"] = False
    if output_schema is None:
        output_schema = _output_schema(hints.get("return", inspect.Signature.empty))
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
        headers=_header_params(tool_name, schema),
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
    ctx = _signature(fn, context_type)[2] if fn is not None else None
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
    params, _, ctx = _signature(fn, context_type)
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
    params, hints, ctx = _signature(fn, context_type)
    arguments = [
        t.PromptArgument(
            name=p.name,
            required=p.default is inspect.Parameter.empty,
            description=_opt(_description(hints.get(p.name))),
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


def _description(annotation: Any) -> str | None:
    """`Annotated[str, msgspec.Meta(description=...)]` documents a prompt argument."""
    if get_origin(annotation) is Annotated:
        for extra in get_args(annotation)[1:]:
            if isinstance(extra, msgspec.Meta) and extra.description:
                return extra.description
    return None


def build_completion(fn: Callable[..., Any]) -> CompletionDef:
    return CompletionDef(fn, inspect.iscoroutinefunction(fn))
