"""From a handler's signature to what its calls need: the parameters bound from JSON,
the msgspec struct typed arguments decode into (or, when pydantic is in the signature,
the pydantic model of `_pydantic`), the input and output JSON Schemas, the jsonschema-rs
validation of a raw input schema, and the arguments mirrored into `Mcp-Param-*` headers.
The feature definitions (`_defs`) are built on top of this; it knows nothing of tools,
resources or prompts beyond their parameters."""

from __future__ import annotations

import inspect
import types
import typing
from collections import abc
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Protocol, get_args, get_origin

import msgspec

from mcpgen._errors import ConfigurationError
from mcpgen._protocol import mcp_header_params
from mcpgen._server import _pydantic
from mcpgen._server._content import ARGUMENTS_GUIDANCE, CONTENT_TYPES, ArgumentsError
from mcpgen._server._context import InputRequired
from mcpgen._server._formats import mark_datetimes
from mcpgen_types import latest as t

__all__ = [
    "EMPTY",
    "Binder",
    "Header",
    "Shape",
    "argument_description",
    "header_params",
    "return_schema",
    "raw_validator",
    "signature",
    "typed_shape",
]

EMPTY = inspect.Signature.empty


class Header(msgspec.Struct, frozen=True):
    """Mirror a tool argument into an `Mcp-Param-<name>` HTTP header:
    `region: Annotated[str, Header("Region")]`."""

    name: str


class Binder(Protocol):
    """Validates a call's arguments into the handler's keyword arguments: a msgspec
    struct's, a raw input schema's (jsonschema-rs) or pydantic's."""

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The handler's keyword arguments; raises ArgumentsError."""
        ...


def signature(
    fn: Callable[..., Any], context_type: type
) -> tuple[list[inspect.Parameter], dict[str, Any], str | None]:
    """The parameters bound from JSON arguments, the resolved type hints, and the name
    of the parameter that receives the context (None when there is none)."""
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
    mark_datetimes([struct], [top], components)
    schema = components.pop(top["$ref"].split("/")[-1])
    schema.pop("title", None)
    schema.setdefault("properties", {})
    if not schema.get("required", True):
        del schema["required"]
    if components:
        schema["$defs"] = components
    return dict(schema)


# What a handler may return as a list of content blocks (`to_call_result` sends such a
# list as `content`); the bare forms have no item type, so they may hold blocks too.
_SEQUENCES = (list, tuple, abc.Sequence, abc.MutableSequence, abc.Collection, abc.Iterable)
# Values that never become `structuredContent`: content blocks, a ready result, a round
# of input requests.
_NOT_STRUCTURED = (*CONTENT_TYPES, t.CallToolResult, InputRequired)


def _members(annotation: Any) -> tuple[Any, ...]:
    """The members of a union (Annotated unwrapped), or the annotation alone."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _members(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return tuple(m for a in get_args(annotation) for m in _members(a))
    return (annotation,)


def _unstructured(member: Any) -> bool:
    if member is Any or member is object:
        return True
    return isinstance(member, type) and issubclass(member, _NOT_STRUCTURED)


def _may_hold_content(annotation: Any) -> bool:
    """Whether a value of this type may be content blocks (one, a list of them, or a
    result): such a value goes out as `content`, so the tool advertises no output schema
    (clients require `structuredContent` from a tool that has one)."""
    for member in _members(annotation):
        if _unstructured(member) or member in _SEQUENCES:
            return True
        if get_origin(member) in _SEQUENCES:
            items = [a for a in get_args(member) if a is not Ellipsis]
            if not items or any(_unstructured(m) for a in items for m in _members(a)):
                return True
    return False


def return_schema(annotation: Any) -> dict[str, Any] | None:
    """Schema for a return annotation that produces structuredContent, else None: a
    handler without one, one returning text (`str`, `str | None`) and one that may
    return content blocks advertise no output schema."""
    if annotation is EMPTY or annotation is None:
        return None
    members = _members(annotation)
    if all(m in (str, type(None), None) for m in members) or _may_hold_content(annotation):
        return None
    if _pydantic.involves(annotation):
        return _pydantic.output_schema(annotation)
    try:
        (top,), components = msgspec.json.schema_components(
            [annotation], ref_template="#/$defs/{name}"
        )
    except TypeError:
        return None
    mark_datetimes([annotation], [top], components)
    if "$ref" in top and len(top) == 1:
        schema = dict(components.pop(top["$ref"].split("/")[-1]))
        schema.pop("title", None)
    else:
        schema = dict(top)
    if components:
        schema["$defs"] = components
    return schema


class Shape(msgspec.Struct, frozen=True):
    """What a typed tool's signature gives: its arguments struct (or the pydantic
    binder when pydantic is in the signature) and schemas."""

    ctx: str | None
    args_type: type | None  # the msgspec struct, None when pydantic validates
    binder: Binder
    schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    keep: Any = None  # holds what the cache key names by identity (the globals)


# Tools made from one function body (a factory called in a loop) share a shape.
_SHAPES: dict[Any, Shape] = {}


def typed_shape(fn: Callable[..., Any], context_type: type) -> Shape:
    """The arguments struct and schemas of a handler with typed parameters; raises
    TypeError for a parameter type msgspec (or pydantic) cannot decode."""
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
    params, hints, ctx = signature(fn, context_type)
    output = return_schema(hints.get("return", EMPTY))
    if any(_pydantic.involves(hints.get(p.name, Any), p.default) for p in params):
        model = _pydantic.ArgumentsModel(
            fn.__name__, [(p.name, hints.get(p.name, Any), p.default) for p in params], _keywords
        )
        shape = Shape(ctx, None, model, model.schema, output, space)
    else:
        args_type, schema = _msgspec_arguments(fn.__name__, params, hints)
        shape = Shape(ctx, args_type, StructArguments(args_type), schema, output, space)
    if key is not None and not isinstance(hints, _CallerHints):
        _SHAPES[key] = shape
    return shape


def _msgspec_arguments(
    name: str, params: list[inspect.Parameter], hints: dict[str, Any]
) -> tuple[type, dict[str, Any]]:
    fields: list[tuple[Any, ...]] = []
    for p in params:
        annotation = _with_header_meta(hints.get(p.name, Any))
        if p.default is inspect.Parameter.empty:
            fields.append((p.name, annotation))
        else:
            fields.append((p.name, annotation, p.default))
    args_type = msgspec.defstruct(f"{name}_arguments", fields, kw_only=True)
    msgspec.json.Decoder(args_type)  # rejects unsupported parameter types now
    schema = _object_schema(args_type)
    if not params:
        schema["additionalProperties"] = False
    return args_type, schema


def _keywords(extra: Any) -> dict[str, Any] | None:
    """Our `Annotated` markers as pydantic `Field` keywords (for pydantic signatures)."""
    if isinstance(extra, Header):
        return {"json_schema_extra": {"x-mcp-header": extra.name}}
    if isinstance(extra, msgspec.Meta):
        return _pydantic.meta_keywords(extra)
    return None


def _jsonschema_rs() -> Any:
    """jsonschema-rs (the `validation` extra) validates raw JSON Schema tools; it is
    imported with the first such tool. None when it is not installed."""
    try:
        import jsonschema_rs  # noqa: PLC0415 (optional, and only for raw schemas)
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return jsonschema_rs


class StructArguments:
    """Conversion into a msgspec struct (`call_tool` does the same inline: its hot path)."""

    __slots__ = ("_type",)

    def __init__(self, args_type: type) -> None:
        self._type = args_type

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return msgspec.structs.asdict(msgspec.convert(arguments, self._type))
        except msgspec.ValidationError as exc:
            raise ArgumentsError(f"{exc}. {ARGUMENTS_GUIDANCE}") from None


class RawArguments:
    """A raw input schema's validation (jsonschema-rs): the handler gets the arguments
    as sent once they validate."""

    __slots__ = ("_validator",)

    def __init__(self, validator: Any) -> None:
        self._validator = validator

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        errors = [
            f"{'/'.join(map(str, e.instance_path)) or '(root)'}: {e.message}"
            for e in self._validator.iter_errors(arguments)
        ]
        if errors:
            raise ArgumentsError("; ".join(errors[:10]))
        return dict(arguments)


def raw_validator(tool_name: str, input_schema: dict[str, Any]) -> Binder:
    """The validation of a tool registered with a raw input schema."""
    if input_schema.get("type") != "object":
        raise ConfigurationError(f"tool {tool_name!r}: inputSchema needs type 'object' at its root")
    jsonschema_rs = _jsonschema_rs()
    if jsonschema_rs is None:
        raise ConfigurationError(
            f"tool {tool_name!r} has a raw JSON Schema: validating it needs jsonschema-rs "
            "(pip install 'mcpgen[validation]'), or declare typed parameters instead"
        )
    try:
        return RawArguments(jsonschema_rs.validator_for(input_schema))
    except Exception as exc:
        raise ConfigurationError(f"tool {tool_name!r}: invalid inputSchema: {exc}") from None


def header_params(tool_name: str, schema: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Lower-case header name -> (argument, JSON type) for the arguments marked `Header`."""
    try:
        return mcp_header_params(schema)
    except ValueError as exc:
        raise ConfigurationError(f"tool {tool_name!r}: {exc}") from None


def argument_description(annotation: Any) -> str | None:
    """`Annotated[str, msgspec.Meta(description=...)]` documents a prompt argument."""
    if get_origin(annotation) is Annotated:
        for extra in get_args(annotation)[1:]:
            if isinstance(extra, msgspec.Meta) and extra.description:
                return extra.description
    return None
