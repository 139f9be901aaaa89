"""A tool made from another tool (`Server.add_transformed_tool`): another name, title or
description; arguments renamed or described anew; arguments hidden with a fixed value;
the result passed through a function of yours.

The new tool's input schema is the source's with the renames, descriptions and hidden
arguments applied; its output schema is the source's, or, when the result is wrapped,
the one the wrapping function's return annotation gives. A call validates its
arguments by the source's own rules after mapping the names back and adding the fixed
values, then runs the source's handler: tasks, input rounds and the `Context` are the
source's.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypedDict, Unpack, get_type_hints

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._server import Registry
from mcpgen._server._arguments import EMPTY, Binder, header_params, return_schema
from mcpgen._server._content import ArgumentsError
from mcpgen._server._context import InputRequired
from mcpgen._server._defs import TOOL_NAME as _TOOL_NAME
from mcpgen._server._defs import ToolDef

__all__ = ["TransformOptions", "transformed", "with_transformed"]


class TransformOptions(TypedDict, total=False):
    """The keywords of `Server.add_transformed_tool` (besides the names)."""

    title: str | None
    description: str | None
    rename: Mapping[str, str] | None  # {source argument: new name}
    describe: Mapping[str, str] | None  # {source argument: new description}
    hide: Mapping[str, Any] | None  # {source argument: the fixed value it always gets}
    result: Callable[[Any], Any] | None  # applied to the source's result


class _Mapped:
    """Arguments in the new tool's names -> the source's validated keyword arguments."""

    __slots__ = ("back", "fixed", "source")

    def __init__(self, source: ToolDef, back: Mapping[str, str], fixed: Mapping[str, Any]) -> None:
        self.source, self.back, self.fixed = source, dict(back), dict(fixed)

    def bind(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        back = self.back
        mapped = {back.get(key, key): value for key, value in arguments.items()}
        mapped.update(self.fixed)  # a hidden argument's value is never the caller's
        source = self.source
        if source.args_type is None:
            return source.validator.bind(mapped)
        try:
            return msgspec.structs.asdict(msgspec.convert(mapped, source.args_type))
        except msgspec.ValidationError as exc:
            message = str(exc)
            for new, old in back.items():  # name the arguments as the caller knows them
                message = message.replace(f"`$.{old}`", f"`$.{new}`")
                message = message.replace(f"field `{old}`", f"field `{new}`")
            raise ArgumentsError(message) from None


def _input_schema(
    schema: Mapping[str, Any],
    rename: Mapping[str, str],
    hide: Mapping[str, Any],
    describe: Mapping[str, str],
) -> dict[str, Any]:
    result = copy.deepcopy(dict(schema))
    properties: dict[str, Any] = result.get("properties", {})
    for name in (*rename, *hide, *describe):
        if name not in properties:
            raise ConfigurationError(f"the source tool has no argument {name!r}")
    clash = [rename[n] for n in rename if rename[n] in properties and rename[n] not in rename]
    if clash:
        raise ConfigurationError(f"argument {clash[0]!r} exists already: rename it too")
    renamed: dict[str, Any] = {}
    for name, prop in properties.items():
        if name in hide:
            continue
        entry = dict(prop)
        if name in describe:
            entry["description"] = describe[name]
        renamed[rename.get(name, name)] = entry
    result["properties"] = renamed
    required = [rename.get(n, n) for n in result.get("required", ()) if n not in hide]
    if required:
        result["required"] = required
    else:
        result.pop("required", None)
    return result


def _wrapped(source: ToolDef, wrap: Callable[[Any], Any]) -> tuple[Callable[..., Any], bool]:
    """The source's handler with `wrap` applied to its result (an `InputRequired`
    passes through); async when either is."""
    fn = source.fn
    wrap_async = inspect.iscoroutinefunction(wrap)
    if source.is_async or wrap_async:

        @functools.wraps(fn)
        async def run_async(**kwargs: Any) -> Any:
            value = fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
            if isinstance(value, InputRequired):
                return value
            done = wrap(value)
            return await done if wrap_async else done

        return run_async, True

    @functools.wraps(fn)
    def run(**kwargs: Any) -> Any:
        value = fn(**kwargs)
        return value if isinstance(value, InputRequired) else wrap(value)

    return run, False


def _output_schema(wrap: Callable[[Any], Any]) -> dict[str, Any] | None:
    try:
        hints = get_type_hints(wrap, include_extras=True)
    except Exception:  # an annotation that does not resolve: no schema, as for a plain tool
        return None
    return return_schema(hints.get("return", EMPTY))


def transformed(
    source: ToolDef,
    *,
    name: str,
    title: str | None = None,
    description: str | None = None,
    rename: Mapping[str, str] | None = None,
    describe: Mapping[str, str] | None = None,
    hide: Mapping[str, Any] | None = None,
    result: Callable[[Any], Any] | None = None,
) -> ToolDef:
    """The registry entry of a tool made from `source` (see the module docstring)."""
    if not _TOOL_NAME.match(name):
        raise ConfigurationError(f"tool name {name!r}: use 1-128 of A-Z a-z 0-9 _ - .")
    rename, describe, hide = dict(rename or {}), dict(describe or {}), dict(hide or {})
    both = set(rename) & set(hide)
    if both:
        raise ConfigurationError(f"argument {sorted(both)[0]!r} is both renamed and hidden")
    schema = _input_schema(source.definition.input_schema, rename, hide, describe)
    if len(set(rename.values())) != len(rename):
        raise ConfigurationError("two arguments renamed to the same name")
    fn, is_async = source.fn, source.is_async
    output: Any = source.definition.output_schema
    if result is not None:
        fn, is_async = _wrapped(source, result)
        found = _output_schema(result)
        output = UNSET if found is None else found
    definition = msgspec.structs.replace(
        source.definition,
        name=name,
        title=source.definition.title if title is None else title,
        description=source.definition.description if description is None else description,
        input_schema=schema,
        output_schema=output,
    )
    back = {new: old for old, new in rename.items()}
    binder: Binder = _Mapped(source, back, hide)
    return msgspec.structs.replace(
        source,
        name=name,
        fn=fn,
        is_async=is_async,
        definition=definition,
        args_type=None,
        validator=binder,
        headers=header_params(name, schema),
    )


def with_transformed(
    registry: Registry,
    source: str,
    name: str,
    replace: bool,
    **changes: Unpack[TransformOptions],
) -> Registry:
    """`registry` with the tool `name` made from its tool `source` (which `replace`
    removes); a name taken raises ConfigurationError."""
    tool = registry.tools.get(source)
    if tool is None:
        raise ConfigurationError(f"no tool {source!r}")
    new = transformed(tool, name=name, **changes)
    tools = {key: entry for key, entry in registry.tools.items() if not replace or key != source}
    if new.name in tools:
        raise ConfigurationError(f"tool {new.name!r} is registered twice")
    return msgspec.structs.replace(registry, tools={**tools, new.name: new})
