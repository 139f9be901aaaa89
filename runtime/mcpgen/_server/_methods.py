"""The methods a server answers, as a table: params types, handlers, MRTR digests.

Each handler takes (core, session, call, params) and returns a result struct, a
pre-encoded `msgspec.Raw`, an `InputRequired`, `DEFERRED`, or a coroutine resolving
to one of these. Typed params come from the generated tables; legacy requests (no
`_meta`, params often omitted) decode into the generated lenient variants of the same
types (`LENIENT_PARAMS`, where `_meta` may be absent).
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._call import Call
from mcpgen._server._content import ArgumentsError, failure, to_call_result, tool_error
from mcpgen._server._context import InputRequired
from mcpgen._server._invoke import complete_with, invoke, tool_async, tool_threaded, with_context
from mcpgen._server._peer import LegacyView, SessionView
from mcpgen._server._state import params_digest
from mcpgen._server._task_methods import cancel_task, get_task, listen, update_task
from mcpgen._server._visible import visible
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore

__all__ = [
    "METHODS",
    "TYPED_LISTS",
    "MethodSpec",
    "check_headers",
    "initialize_result",
    "read_own",
]

Handler = Callable[["ServerCore", SessionView, Call, Any], Any]


class MethodSpec(msgspec.Struct, frozen=True):
    name: str
    handler: Handler
    modern: msgspec.json.Decoder[Any] | None
    lenient: msgspec.json.Decoder[Any] | None = None  # the modern type, `_meta` optional
    mrtr: bool = False
    digest: Callable[[Any], str] | None = None
    legacy: bool = True  # False: modern requests only (a legacy session gets -32601)

    def legacy_params(self, version: str, raw: Any) -> Any:
        body = raw if raw is not UNSET else b"{}"
        if self.lenient is None:  # a legacy-only method: the revision's own type
            info = proto.legacy_methods(version)[self.name]
            return msgspec.json.decode(body, type=info.params)
        return self.lenient.decode(body)


# Cacheable results require their cache hints; the core stamps the configured ones.
_HINT: dict[str, Any] = {"ttl_ms": 0, "cache_scope": "private"}


def _not_found(call: Call, what: str, name: str, **data: Any) -> McpError:
    return McpError(proto.INVALID_PARAMS, f"unknown {what}: {name!r}", data or None)


def _resource_not_found(call: Call, uri: str) -> McpError:
    # 2026-07-28 uses -32602; older revisions used -32002 (resources page of each).
    if call.era == "modern":
        code = proto.INVALID_PARAMS
    else:
        code = proto.legacy_module(call.version).RESOURCE_NOT_FOUND
    return McpError(code, f"resource not found: {uri}", {"uri": uri})


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", UNSET)
    return None if cursor is UNSET else cursor


# -- discovery and lists ---------------------------------------------------------------------
def discover(core: ServerCore, session: SessionView, call: Call, params: Any) -> Any:
    return msgspec.Raw(core.discover())


def _lister(method: str, field: str, select: Callable[[Any], Any], typed: bool = False) -> Handler:
    """A paginated list method: the registry entries' definitions, one cached page at a
    time, in the result type the generated table names for `method`. `typed`: the page
    as a result struct, not encoded (what a middleware chain sees and may change)."""
    result_type = t.METHODS[method].result

    def build(page: list[Any], nxt: str | None) -> Any:
        return result_type(**{field: page}, next_cursor=nxt or UNSET, **_HINT)

    def handler(core: ServerCore, session: SessionView, call: Call, params: Any) -> Any:
        items, lacking = visible(select(core.registry), call, core.registry.hide_unauthorized)
        if typed:
            return core.page_result(
                method, core.offset(method, _cursor(params), items), items, build
            )
        return core.page(method, call.version, call.era, _cursor(params), items, build, lacking)

    return handler


_LISTS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "tools/list": ("tools", lambda r: r.tools.values()),
    "prompts/list": ("prompts", lambda r: r.prompts.values()),
    "resources/list": ("resources", lambda r: r.resources.values()),
    "resources/templates/list": ("resource_templates", lambda r: r.templates),
}
list_tools, list_prompts, list_resources, list_templates = (
    _lister(method, *how) for method, how in _LISTS.items()
)
# The same lists as result structs, for a server with middleware.
TYPED_LISTS: dict[str, Handler] = {m: _lister(m, *how, typed=True) for m, how in _LISTS.items()}


# -- tools -----------------------------------------------------------------------------------
def call_tool(
    core: ServerCore, session: SessionView, call: Call, params: t.CallToolRequestParams
) -> Any:
    tool = core.registry.tools.get(params.name)
    if tool is None:
        raise _not_found(call, "tool", params.name)
    arguments = params.arguments if params.arguments is not UNSET else {}
    if tool.args_type is not None:
        try:
            kwargs = msgspec.structs.asdict(msgspec.convert(arguments, tool.args_type))
        except msgspec.ValidationError as exc:
            return tool_error(
                f"Invalid arguments for tool {tool.name!r}: {exc}. "
                "Check the tool's inputSchema and call it again with corrected arguments."
            )
    else:  # a raw input schema, or pydantic parameters
        try:
            kwargs = tool.validator.bind(arguments)
        except ArgumentsError as exc:
            return tool_error(f"Invalid arguments for tool {tool.name!r}: {exc}")
    if tool.task is not None:
        call.lifespan, call.core = core.lifespan, core  # the task's handler sees them too
        answer = core.tasks.dispatch(call, tool, kwargs)
        if answer is not None:
            return answer
    if tool.context_param is not None:
        kwargs[tool.context_param] = with_context(core, call)
    if tool.is_async:
        return tool_async(core, tool, kwargs)
    if tool.threaded and core.run_sync is not None:
        return tool_threaded(core, tool, kwargs, call)  # in a worker thread
    try:
        value = tool.fn(**kwargs)
    except McpError:
        raise
    except Exception as exc:
        return failure(tool.name, exc, core.mask_errors)
    return value if isinstance(value, InputRequired) else to_call_result(value, tool.definition)


# -- resources -------------------------------------------------------------------------------
def read_resource(
    core: ServerCore, session: SessionView, call: Call, params: t.ReadResourceRequestParams
) -> Any:
    uri = params.uri
    registry = core.registry
    exact = registry.resources.get(uri)
    if exact is not None:
        mime = exact.definition.mime_type
        if exact.fn is None:
            return _read_result(uri, mime, exact.static)
        return invoke(core, exact, {}, call, lambda v: _read_result(uri, mime, v))
    for template in registry.templates:
        found = template.template.match(uri)
        if found is not None:
            done = functools.partial(_read_result, uri, template.definition.mime_type)
            return invoke(core, template, dict(found), call, done)
    fallback = registry.fallback_resource
    if fallback is not None:
        done = functools.partial(_read_result, uri, UNSET)
        return invoke(core, fallback, {"uri": uri}, call, done)
    raise _resource_not_found(call, uri)


def read_own(core: ServerCore, call: Call, uri: str) -> Any:
    """`resources/read` of `uri` for a handler serving `call` (`ctx.read_resource`)."""
    return read_resource(core, None, call, t.ReadResourceRequestParams(meta={}, uri=uri))  # type: ignore[arg-type]


def _read_result(uri: str, mime: Any, value: Any) -> Any:
    if isinstance(value, InputRequired | t.ReadResourceResult):
        return value
    items = value if isinstance(value, list) else [value]
    contents = []
    for item in items:
        if isinstance(
            item, t.TextResourceContents | t.BlobResourceContents | t.ResourceContentsVariant
        ):
            contents.append(msgspec.convert(msgspec.to_builtins(item), t.ResourceContentsVariant))
        elif isinstance(item, str):
            contents.append(t.ResourceContentsVariant(uri=uri, text=item, mime_type=mime))
        elif isinstance(item, bytes | bytearray):
            contents.append(
                t.ResourceContentsVariant(
                    uri=uri, blob=base64.b64encode(item).decode(), mime_type=mime
                )
            )
        else:
            raise TypeError(
                f"a resource reader returned {type(item).__name__}; return str, bytes or contents"
            )
    return t.ReadResourceResult(contents=contents, **_HINT)


# -- prompts ---------------------------------------------------------------------------------
def get_prompt(
    core: ServerCore, session: SessionView, call: Call, params: t.GetPromptRequestParams
) -> Any:
    prompt = core.registry.prompts.get(params.name)
    if prompt is None:
        raise _not_found(call, "prompt", params.name)
    args = dict(params.arguments) if params.arguments is not UNSET else {}
    missing = [name for name in prompt.required if name not in args]
    if missing:
        raise McpError(proto.INVALID_PARAMS, f"prompt {prompt.name!r} needs arguments {missing}")
    kwargs = {k: v for k, v in args.items() if k in prompt.accepted}
    return invoke(core, prompt, kwargs, call, lambda v: _prompt_result(prompt.definition, v))


def _prompt_result(definition: t.Prompt, value: Any) -> Any:
    if isinstance(value, InputRequired | t.GetPromptResult):
        return value
    items = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, t.PromptMessage):
            messages.append(item)
        elif isinstance(item, str):
            messages.append(t.PromptMessage(role="user", content=t.TextContent(text=item)))
        else:
            messages.append(t.PromptMessage(role="user", content=item))
    return t.GetPromptResult(messages=messages, description=definition.description)


# -- completion ------------------------------------------------------------------------------
def complete(
    core: ServerCore, session: SessionView, call: Call, params: t.CompleteRequestParams
) -> Any:
    ref = params.ref
    registry = core.registry
    if isinstance(ref, t.PromptReference):
        key = ("ref/prompt", ref.name)
        if ref.name not in registry.prompts:
            raise _not_found(call, "prompt", ref.name)
    else:
        key = ("ref/resource", ref.uri)
        if (
            not any(tpl.template.template == ref.uri for tpl in registry.templates)
            and ref.uri not in registry.resources
        ):
            raise _not_found(call, "resource template", ref.uri)
    target = registry.completions.get(key) or registry.fallback_completion
    context = {}
    if params.context is not UNSET and params.context.arguments is not UNSET:
        context = dict(params.context.arguments)
    if target is None:
        return _complete_result([])
    args: list[Any] = [params.argument.name, params.argument.value, context]
    if target is registry.fallback_completion:
        args.insert(0, ref)
    return complete_with(core, target, args, _complete_result)


def _complete_result(value: Any) -> t.CompleteResult:
    if isinstance(value, t.CompleteResult):
        return value
    values = [str(v) for v in (value or [])]
    completion = t.CompleteResultCompletion(
        values=values[:100], total=len(values), has_more=len(values) > 100
    )
    return t.CompleteResult(completion=completion)


# -- legacy session methods ----------------------------------------------------------------------
def _legacy(session: SessionView, call: Call) -> LegacyView:
    """These methods exist only in legacy sessions (the method table serves no modern
    request to them); a session without a handshake is refused all the same."""
    if session.legacy is None:
        raise McpError(proto.METHOD_NOT_FOUND, f"method not found: {call.method}")
    return session.legacy


def set_level(core: ServerCore, session: SessionView, call: Call, params: Any) -> Any:
    _legacy(session, call).log_rank = proto.LOG_LEVELS[params.level]
    return t.Result()


def subscribe(core: ServerCore, session: SessionView, call: Call, params: Any) -> Any:
    core.check_subscription((params.uri,))
    _legacy(session, call).subscriptions.add(params.uri)
    return t.Result()


def unsubscribe(core: ServerCore, session: SessionView, call: Call, params: Any) -> Any:
    _legacy(session, call).subscriptions.discard(params.uri)
    return t.Result()


# -- headers, initialize ------------------------------------------------------------------
def check_headers(core: ServerCore, method: str, params: Any, headers: dict[str, str]) -> None:
    """`Mcp-Name` and `Mcp-Param-*` must equal the body (2026-07-28 transports page)."""
    field = proto.NAME_PARAM.get(method)
    if field is not None:
        expected = getattr(params, {"taskId": "task_id"}.get(field, field), None)
        name = headers.get("mcp-name")
        if name is None:
            raise proto.header_mismatch("the Mcp-Name header is required for " + method)
        if proto.decode_header_value(name) != expected:
            raise proto.header_mismatch(f"Mcp-Name does not match params.{field}")
    if method == "tools/call":
        tool = core.registry.tools.get(params.name)
        if tool is None or not tool.headers:
            return
        arguments = params.arguments if params.arguments is not UNSET else {}
        for header, (prop, _) in tool.headers.items():
            value = arguments.get(prop)
            sent = headers.get("mcp-param-" + header)
            if value is None and sent is None:
                continue
            if value is None or sent is None:
                raise proto.header_mismatch(
                    f"Mcp-Param-{header} and arguments.{prop} must be sent together"
                )
            if not proto.same_header_value(proto.decode_header_value(sent), value):
                raise proto.header_mismatch(f"Mcp-Param-{header} does not match arguments.{prop}")


def initialize_result(core: ServerCore, version: str) -> Any:
    """The legacy handshake's answer, as `version`'s own InitializeResult: built once
    per revision and reused while the capabilities, info and instructions it was built
    from stay the same (a legacy client starts every session with it; it is only
    encoded, never changed)."""
    every, info, instructions = core.capabilities(), core.info, core.instructions
    built = core.handshakes.get(version)
    if built is not None and built[:3] == (every, info, instructions):
        return built[3]
    module = proto.legacy_module(version)
    caps = {k: v for k, v in every.items() if k != "extensions"}
    result = module.InitializeResult(
        protocol_version=version,
        # The revision's own types keep only the keys it defines.
        capabilities=msgspec.convert(caps, module.ServerCapabilities),
        server_info=msgspec.convert(msgspec.to_builtins(info), module.Implementation),
        instructions=UNSET if instructions is None else instructions,
    )
    core.handshakes[version] = (every, info, instructions, result)
    return result


# -- the table ---------------------------------------------------------------------------------
def _spec(
    name: str,
    handler: Handler,
    types: ModuleType = t,
    *,
    mrtr: bool = False,
    digest: Callable[[Any], str] | None = None,
    legacy: bool = True,
) -> MethodSpec:
    """A method with a modern params type (from `types`); one legacy sessions may call
    too decodes their requests with the generated lenient variant (`_meta` optional)."""
    lenient = t.LENIENT_PARAMS[name] if legacy else None
    return MethodSpec(
        name,
        handler,
        msgspec.json.Decoder(types.METHODS[name].params),
        None if lenient is None else msgspec.json.Decoder(lenient),
        mrtr,
        digest,
        legacy,
    )


def _digest_tool(p: Any) -> str:
    return params_digest("tools/call", p.name, p.arguments if p.arguments is not UNSET else {})


def _digest_prompt(p: Any) -> str:
    return params_digest("prompts/get", p.name, p.arguments if p.arguments is not UNSET else {})


def _digest_read(p: Any) -> str:
    return params_digest("resources/read", p.uri)


METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        _spec("server/discover", discover),
        _spec("tools/list", list_tools),
        _spec("tools/call", call_tool, mrtr=True, digest=_digest_tool),
        _spec("prompts/list", list_prompts),
        _spec("prompts/get", get_prompt, mrtr=True, digest=_digest_prompt),
        _spec("resources/list", list_resources),
        _spec("resources/templates/list", list_templates),
        _spec("resources/read", read_resource, mrtr=True, digest=_digest_read),
        _spec("completion/complete", complete),
        # Modern only: the Tasks extension's view of these (with `taskIds`, `_meta`).
        _spec("subscriptions/listen", listen, x, legacy=False),
        _spec("tasks/get", get_task, x, legacy=False),
        _spec("tasks/update", update_task, x, legacy=False),
        _spec("tasks/cancel", cancel_task, x, legacy=False),
        MethodSpec("logging/setLevel", set_level, None),
        MethodSpec("resources/subscribe", subscribe, None),
        MethodSpec("resources/unsubscribe", unsubscribe, None),
    )
}
