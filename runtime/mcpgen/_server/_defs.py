"""Registry entries built from user functions: tools, resources, templates, prompts,
completions, and the typed options each registration takes. Everything here runs at
registration time; the call path only reads the frozen results (decoders, schemas,
header maps). How a signature becomes arguments and schemas lives in `_arguments`."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, Unpack

import msgspec
from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._server._apps import APP_MIME_TYPE, AppSource, app_reader, app_tool_meta
from mcpgen._server._arguments import (
    EMPTY,
    Binder,
    Header,
    argument_description,
    header_params,
    raw_validator,
    return_schema,
    signature,
    typed_shape,
)
from mcpgen._server._templates import UriTemplate
from mcpgen._server._visible import scope_set
from mcpgen_types import latest as t
from mcpgen_types.ext_apps import McpUiResourceMeta, McpUiToolMeta

__all__ = [
    "app_resource",
    "CompletionDef",
    "Header",
    "PromptDef",
    "TOOL_NAME",
    "PromptOptions",
    "ResourceDef",
    "ResourceOptions",
    "TaskSupport",
    "TemplateDef",
    "TemplateOptions",
    "ToolDef",
    "ToolOptions",
    "build_completion",
    "build_prompt",
    "build_resource",
    "build_template",
    "build_tool",
]

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")

TaskSupport = Literal["optional", "required"]
"""How a tool may run as a task: `optional` (as a task when the client asks) or
`required` (only as a task)."""


# -- options -----------------------------------------------------------------------------
# One declaration per feature, shared by the `Server` decorators (as `**options`, PEP 692)
# and the builders below: mypy checks a caller's keywords and values against it, and
# `_check` rejects unknown keywords at run time for callers mypy does not see.
class _Options(TypedDict, total=False):
    """Every feature also takes `scopes`: what a caller's token must grant to use it."""

    name: str | None  # default: the function's name
    title: str | None
    description: str | None  # default: the function's docstring
    icons: list[t.Icon] | None
    meta: dict[str, Any] | None  # the definition's `_meta`
    scopes: Sequence[str] | None  # OAuth scopes a caller needs (HTTP with `auth=`)
    tags: Sequence[str] | None  # labels for policies (`mcpgen.middleware.Visibility`)
    # A sync handler runs in the server's worker threads (default True); False runs it
    # on the event loop's thread, as an async handler's code does. Ignored for async ones.
    threaded: bool


class PromptOptions(_Options, total=False):
    """Keywords of `Server.prompt`: name, title, description, icons, meta, threaded."""


class TemplateOptions(_Options, total=False):
    """Keywords of `Server.resource_template`: name, title, description, mime_type,
    annotations, icons, meta, threaded."""

    mime_type: str | None
    annotations: t.Annotations | None


class ResourceOptions(TemplateOptions, total=False):
    """Keywords of `Server.resource` and `Server.add_resource`: those of a template and
    size (default for static content: its length in bytes)."""

    size: int | None


class ToolOptions(_Options, total=False):
    """Keywords of `Server.tool` and `Server.add_tool`: name, title, description,
    annotations, input_schema (a raw JSON Schema, validated with jsonschema-rs, instead of
    typed parameters), output_schema (default: from the return annotation), icons, meta,
    task, detach, app (MCP Apps) and threaded (False: a sync handler runs on the event
    loop's thread)."""

    annotations: t.ToolAnnotations | None
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    task: TaskSupport | None
    detach: bool
    timeout: float | None  # seconds (`mcpgen.middleware.Timeouts` enforces it)
    # MCP Apps: the `ui://` resource the host renders with this tool's results, or the
    # whole link (`McpUiToolMeta(resource_uri=..., visibility=["app"])` for app-only)
    app: str | McpUiToolMeta | None


def _check(options: Mapping[str, object], allowed: frozenset[str], what: str) -> None:
    unknown = options.keys() - allowed
    if unknown:
        raise TypeError(f"{what}: unexpected keyword argument(s) {', '.join(sorted(unknown))}")


def _timeout(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise ConfigurationError(f"timeout= takes a positive number of seconds, not {value!r}")
    return value


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


class ToolDef(msgspec.Struct, frozen=True):
    name: str
    fn: Callable[..., Any]
    is_async: bool
    definition: t.Tool
    args_type: type | None  # the Struct typed arguments convert into
    validator: Binder  # validates arguments; call_tool inlines it when args_type is set
    context_param: str | None
    headers: Mapping[str, tuple[str, str]]  # lower-case header name -> (property, JSON type)
    task: TaskSupport | None = None  # may run as a task (Tasks extension)
    detach: bool = False  # runs in the request until `await ctx.detach()`
    scopes: frozenset[str] = msgspec.field(default_factory=frozenset)
    tags: frozenset[str] = msgspec.field(default_factory=frozenset)
    threaded: bool = True  # a sync handler runs in a worker thread
    timeout: float | None = None  # seconds, for the Timeouts middleware


class ResourceDef(msgspec.Struct, frozen=True):
    uri: str
    definition: t.Resource
    fn: Callable[..., Any] | None
    is_async: bool
    context_param: str | None
    static: str | bytes | None = None  # the content when registered without a reader
    scopes: frozenset[str] = msgspec.field(default_factory=frozenset)
    tags: frozenset[str] = msgspec.field(default_factory=frozenset)
    threaded: bool = True


class TemplateDef(msgspec.Struct, frozen=True):
    template: UriTemplate
    definition: t.ResourceTemplate
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None
    scopes: frozenset[str] = msgspec.field(default_factory=frozenset)
    tags: frozenset[str] = msgspec.field(default_factory=frozenset)
    threaded: bool = True


class PromptDef(msgspec.Struct, frozen=True):
    name: str
    definition: t.Prompt
    fn: Callable[..., Any]
    is_async: bool
    context_param: str | None
    required: tuple[str, ...] = ()
    accepted: frozenset[str] = msgspec.field(default_factory=frozenset)
    scopes: frozenset[str] = msgspec.field(default_factory=frozenset)
    threaded: bool = True
    tags: frozenset[str] = msgspec.field(default_factory=frozenset)


class CompletionDef(msgspec.Struct, frozen=True):
    fn: Callable[..., Any]
    is_async: bool
    threaded: bool = True


# -- builders ------------------------------------------------------------------------------
def build_tool(
    fn: Callable[..., Any], context_type: type, **options: Unpack[ToolOptions]
) -> ToolDef:
    _check(options, ToolOptions.__optional_keys__, "tool()")
    tool_name = options.get("name") or fn.__name__
    task, detach = options.get("task"), options.get("detach", False)
    if not TOOL_NAME.match(tool_name):
        raise ConfigurationError(f"tool name {tool_name!r}: use 1-128 of A-Z a-z 0-9 _ - .")
    if task not in (None, "optional", "required"):
        raise ConfigurationError(f"tool {tool_name!r}: task must be 'optional' or 'required'")
    if detach and (task is None or not inspect.iscoroutinefunction(fn)):
        raise ConfigurationError(
            f"tool {tool_name!r}: detach=True needs task='optional' or 'required' and an "
            "async handler (it awaits ctx.detach())"
        )
    input_schema = options.get("input_schema")
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
        ctx, args_type, validator = shape.ctx, shape.args_type, shape.binder
        schema, auto_output = dict(shape.schema), shape.output_schema
    explicit_output = options.get("output_schema")
    description = options.get("description")
    definition = t.Tool(
        name=tool_name,
        title=_opt(options.get("title")),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        input_schema=schema,
        output_schema=_opt(explicit_output if explicit_output is not None else auto_output),
        annotations=_opt(options.get("annotations")),
        icons=_opt(options.get("icons")),
        meta=_opt(_tool_meta(options)),
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
        scopes=scope_set(options.get("scopes")),
        threaded=options.get("threaded", True),
        tags=scope_set(options.get("tags")),
        timeout=_timeout(options.get("timeout")),
    )


def _tool_meta(options: ToolOptions) -> dict[str, Any] | None:
    app = options.get("app")
    return options.get("meta") if app is None else app_tool_meta(app, options.get("meta"))


def build_resource(
    uri: str,
    fn: Callable[..., Any] | None,
    context_type: type,
    *,
    static: str | bytes | None = None,
    **options: Unpack[ResourceOptions],
) -> ResourceDef:
    _check(options, ResourceOptions.__optional_keys__, "resource()")
    if "{" in uri:
        raise ConfigurationError(f"resource {uri!r} looks like a template: use resource_template()")
    ctx = signature(fn, context_type)[2] if fn is not None else None
    description, size = options.get("description"), options.get("size")
    if size is None and static is not None:
        size = len(static.encode() if isinstance(static, str) else static)
    definition = t.Resource(
        uri=uri,
        name=options.get("name") or (fn.__name__ if fn is not None else uri),
        title=_opt(options.get("title")),
        description=_opt(
            description if description is not None or fn is None else inspect.getdoc(fn)
        ),
        mime_type=_opt(options.get("mime_type")),
        size=_opt(size),
        annotations=_opt(options.get("annotations")),
        icons=_opt(options.get("icons")),
        meta=_opt(options.get("meta")),
    )
    scopes = scope_set(options.get("scopes"))
    return ResourceDef(
        uri,
        definition,
        fn,
        inspect.iscoroutinefunction(fn),
        ctx,
        static,
        scopes,
        threaded=options.get("threaded", True),
        tags=scope_set(options.get("tags")),
    )


def build_template(
    uri_template: str,
    fn: Callable[..., Any],
    context_type: type,
    **options: Unpack[TemplateOptions],
) -> TemplateDef:
    _check(options, TemplateOptions.__optional_keys__, "resource_template()")
    template = UriTemplate(uri_template)
    params, _, ctx = signature(fn, context_type)
    names = {p.name for p in params}
    missing = [v for v in template.variables if v not in names]
    has_kwargs = any(p.kind is p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values())
    if missing and not has_kwargs:
        raise ConfigurationError(
            f"template {uri_template!r}: {fn.__name__} lacks parameters {missing}"
        )
    description = options.get("description")
    definition = t.ResourceTemplate(
        uri_template=uri_template,
        name=options.get("name") or fn.__name__,
        title=_opt(options.get("title")),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        mime_type=_opt(options.get("mime_type")),
        annotations=_opt(options.get("annotations")),
        icons=_opt(options.get("icons")),
        meta=_opt(options.get("meta")),
    )
    scopes = scope_set(options.get("scopes"))
    return TemplateDef(
        template,
        definition,
        fn,
        inspect.iscoroutinefunction(fn),
        ctx,
        scopes,
        threaded=options.get("threaded", True),
        tags=scope_set(options.get("tags")),
    )


def build_prompt(
    fn: Callable[..., Any], context_type: type, **options: Unpack[PromptOptions]
) -> PromptDef:
    _check(options, PromptOptions.__optional_keys__, "prompt()")
    params, hints, ctx = signature(fn, context_type)
    arguments = [
        t.PromptArgument(
            name=p.name,
            required=p.default is inspect.Parameter.empty,
            description=_opt(argument_description(hints.get(p.name))),
        )
        for p in params
    ]
    description = options.get("description")
    definition = t.Prompt(
        name=options.get("name") or fn.__name__,
        title=_opt(options.get("title")),
        description=_opt(description if description is not None else inspect.getdoc(fn)),
        arguments=arguments or UNSET,
        icons=_opt(options.get("icons")),
        meta=_opt(options.get("meta")),
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
        scope_set(options.get("scopes")),
        options.get("threaded", True),
        scope_set(options.get("tags")),
    )


def build_completion(fn: Callable[..., Any], *, threaded: bool = True) -> CompletionDef:
    return CompletionDef(fn, inspect.iscoroutinefunction(fn), threaded)


def app_resource(
    uri: str, source: AppSource, ui: McpUiResourceMeta | None, options: ResourceOptions
) -> tuple[Callable[[], Awaitable[t.TextResourceContents]], ResourceOptions]:
    """The read function and the resource options of `Server.add_app_resource`: the MCP
    App MIME type, `_meta.ui` beside the caller's own `_meta`, a name from the URI."""
    listed = dict(options.get("meta") or {})
    if ui is not None:
        listed["ui"] = msgspec.to_builtins(ui)
    resource = ResourceOptions(**options)
    resource.setdefault("name", uri.removeprefix("ui://"))
    resource["mime_type"] = APP_MIME_TYPE
    resource["meta"] = listed or None
    return app_reader(uri, source, ui), resource
