"""Registry entries built from user functions: tools, resources, templates, prompts,
completions. Everything here runs at registration time; the call path only reads the
frozen results (decoders, schemas, header maps)."""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_args, get_origin

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._protocol import mcp_header_params
from mcpgen._server._content import CONTENT_TYPES
from mcpgen._server._context import InputRequired
from mcpgen._server._templates import UriTemplate
from mcpgen_types import latest as t


def _jsonschema_rs() -> Any:
    """jsonschema-rs (the `validation` extra) validates raw JSON Schema tools; it is
    imported with the first such tool. None when it is not installed."""
    try:
        import jsonschema_rs  # noqa: PLC0415 (optional, and only for raw schemas)
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return jsonschema_rs


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


class Header(msgspec.Struct, frozen=True):
    """Mirror a tool argument into an `Mcp-Param-<name>` HTTP header:
    `region: Annotated[str, Header("Region")]`."""

    name: str


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


class _CallerHints(dict[str, Any]):
    """Hints resolved with the callers' locals: they may differ between two calls."""


def _hints_with_caller_locals(fn: Callable[..., Any]) -> dict[str, Any]:
    localns: dict[str, Any] = {}
    frame = inspect.currentframe()
    for _ in range(12):
        if frame is None:
            break
        localns = {**frame.f_locals, **localns}
        frame = frame.f_back
    try:
        return _CallerHints(typing.get_type_hints(fn, localns=localns, include_extras=True))
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
_EMPTY = inspect.Signature.empty


class _Shape(msgspec.Struct, frozen=True):
    """What a typed tool's signature gives: its arguments struct and schemas."""

    ctx: str | None
    args_type: type
    schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    keep: Any = None  # holds what the cache key names by identity (the globals)


# Tools made from one function body (a factory called in a loop) share a shape.
_SHAPES: dict[Any, _Shape] = {}


def _typed_shape(fn: Callable[..., Any], context_type: type) -> _Shape:
    try:
        code, space = fn.__code__, fn.__globals__
        key: Any = (
            code,
            context_type,
            fn.__defaults__,
            tuple((fn.__kwdefaults__ or {}).items()),
            tuple(fn.__annotations__.items()),
            id(space),
        )
        hash(key)
    except (AttributeError, TypeError):  # not a plain function, or unhashable defaults
        key = space = None
    shape = _SHAPES.get(key) if key is not None else None
    if shape is not None:
        return shape
    params, hints, ctx = _signature(fn, context_type)
    fields: list[tuple[Any, ...]] = []
    for p in params:
        annotation = _with_header_meta(hints.get(p.name, Any))
        if p.default is inspect.Parameter.empty:
            fields.append((p.name, annotation))
        else:
            fields.append((p.name, annotation, p.default))
    args_type = msgspec.defstruct(f"{fn.__name__}_arguments", fields, kw_only=True)
    msgspec.json.Decoder(args_type)  # rejects unsupported parameter types now
    schema = _object_schema(args_type)
    if not params:
        schema["additionalProperties"] = False
    shape = _Shape(ctx, args_type, schema, _output_schema(hints.get("return", _EMPTY)), space)
    if key is not None and not isinstance(hints, _CallerHints):
        _SHAPES[key] = shape
    return shape


def _validator(tool_name: str, input_schema: dict[str, Any]) -> Any:
    if input_schema.get("type") != "object":
        raise ConfigurationError(f"tool {tool_name!r}: inputSchema needs type 'object' at its root")
    jsonschema_rs = _jsonschema_rs()
    if jsonschema_rs is None:
        raise ConfigurationError(
            f"tool {tool_name!r} has a raw JSON Schema: validating it needs jsonschema-rs "
            "(pip install 'mcpgen[validation]'), or declare typed parameters instead"
        )
    try:
        return jsonschema_rs.validator_for(input_schema)
    except Exception as exc:
        raise ConfigurationError(f"tool {tool_name!r}: invalid inputSchema: {exc}") from None


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
    if input_schema is not None:
        _, hints, ctx = _signature(fn, context_type)
        args_type, validator = None, _validator(tool_name, input_schema)
        schema = dict(input_schema)
        auto_output = _output_schema(hints.get("return", _EMPTY))
    else:
        try:
            shape = _typed_shape(fn, context_type)
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
