"""The middleware chain: typed hooks around every request and notification the core
serves, after its one decode, composed once into one callable per method.

A `Middleware` overrides the hooks it needs; each gets a `MiddlewareContext` (the
decoded params struct, era, principal, headers ...) and `call_next`, and returns the
result (a generated result struct; `InputRequired` for an input round). It may answer
itself, change `ctx.params` or the result, or raise `McpError` (an error reply) or
`ToolError` (a `tools/call` answered with its error result); any other exception is
the core's internal error. For a `tools/call`, a middleware's `on_request` runs around
its own `on_call_tool`; the first middleware of the list is the outermost.

`compose` builds the method table a core serves with: the table of `_methods`, each
handler wrapped in its chain (list methods then give result structs, not encoded
pages). With no middleware the core keeps the plain table: the path of today.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

import msgspec

from mcpgen import _jsonrpc as rpc
from mcpgen._errors import ConfigurationError, ToolError
from mcpgen._server._awaits import InputPending
from mcpgen._server._call import Call, Channel, Pending
from mcpgen._server._drive import YIELD, resume
from mcpgen._server._methods import METHODS, TYPED_LISTS, MethodSpec
from mcpgen._server._mrtr import awaited_round
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore
    from mcpgen._server._session import Session
    from mcpgen.auth._tokens import AccessToken

__all__ = [
    "HOOKS",
    "CallNext",
    "Chains",
    "Middleware",
    "MiddlewareContext",
    "NotificationContext",
    "added",
    "adopted",
    "serving",
]

log = logging.getLogger("mcpgen.server")
P = TypeVar("P")

# The per-method hook of each method that has one; every request also passes `on_request`.
HOOKS: Final[dict[str, str]] = {
    "tools/call": "on_call_tool",
    "tools/list": "on_list_tools",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "prompts/list": "on_list_prompts",
    "resources/read": "on_read_resource",
    "prompts/get": "on_get_prompt",
    "completion/complete": "on_complete",
}


class MiddlewareContext(Generic[P]):
    """One request as a middleware sees it. `params` is the generated params struct of
    the method (replace it, or change it in place, before `call_next` to change what
    the handler gets). `step` is "request" for a request from the client, "task" for
    the work of a task (`tools/call` run in the task runner, `task_id` set); `round`
    counts the input rounds a legacy session served for this request so far (a modern
    client's rounds are requests of their own). `state` is a dict for middleware to
    pass things along the chain."""

    __slots__ = ("_session", "call", "core", "inline", "params", "state", "step", "work")

    def __init__(
        self,
        params: P,
        call: Call,
        core: ServerCore,
        session: Session | None,
        step: str = "request",
        work: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.params = params
        self.call = call
        self.core = core
        self._session = session
        self.step = step
        self.work = work
        self.state: dict[str, Any] = {}
        self.inline = False  # running the chain's first step, before any task of its own

    async def own_task(self) -> None:
        """Make sure what follows runs in this request's own asyncio task: in the first
        step of an inline chain (see `Middleware.inline`) the code runs on the caller's
        stack, maybe in another request's task, so `asyncio.timeout` or a task group
        would act on the wrong task. Costs nothing once the chain runs in its task."""
        if self.inline:
            await YIELD

    @property
    def method(self) -> str:
        return self.call.method

    @property
    def era(self) -> str:
        """ "modern" (2026-07-28 requests) or "legacy" (an `initialize` session)."""
        return self.call.era

    @property
    def version(self) -> str:
        return self.call.version

    @property
    def request_id(self) -> str | int:
        return self.call.request_id

    @property
    def principal(self) -> str | None:
        """Who the transport authenticated (None: nobody, e.g. stdio)."""
        return self.call.principal

    @property
    def auth(self) -> AccessToken | None:
        return self.call.auth

    @property
    def scopes(self) -> frozenset[str]:
        """The scopes the caller's token grants (none without a token)."""
        auth = self.call.auth
        return frozenset() if auth is None else frozenset(auth.scopes)

    @property
    def headers(self) -> dict[str, str] | None:
        """The request's MCP HTTP headers, lower-case (None outside HTTP)."""
        return self.call.channel.headers

    @property
    def peer(self) -> str | None:
        """The client's network address where the transport knows it."""
        return self.call.channel.peer

    @property
    def session_id(self) -> str | None:
        """The legacy HTTP session's id where the transport keeps one."""
        return self.call.origin.session_id()

    @property
    def meta(self) -> dict[str, Any]:
        return self.call.meta

    @property
    def client_info(self) -> t.Implementation | None:
        return self.call.client_info()

    @property
    def task_id(self) -> str | None:
        task = self.call.task
        return None if task is None else task.id

    @property
    def round(self) -> int:
        return self.call.rounds

    def tool(self) -> Any:
        """The registered tool a `tools/call` names (its `definition`, `scopes`,
        `timeout`, `tags` ...), or None."""
        return self.core.registry.tools.get(getattr(self.params, "name", ""))


class NotificationContext:
    """A notification from the client: its method and params (as builtins), where it
    came from. `call_next(ctx)` lets the core act on it; not calling it drops it."""

    __slots__ = ("channel", "frame", "method", "params", "session")

    def __init__(self, frame: rpc.Frame, session: Session, channel: Channel) -> None:
        self.frame = frame
        self.method: str = frame.method
        self.session = session
        self.channel = channel
        self.params: dict[str, Any] = {}
        if frame.params is not msgspec.UNSET:
            with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):
                self.params = msgspec.json.decode(frame.params, type=dict[str, Any])

    @property
    def era(self) -> str:
        meta = self.params.get("_meta")
        if isinstance(meta, dict) and "io.modelcontextprotocol/protocolVersion" in meta:
            return "modern"
        return "legacy"

    @property
    def principal(self) -> str | None:
        return self.channel.principal

    @property
    def headers(self) -> dict[str, str] | None:
        return self.channel.headers


CallNext = Callable[[MiddlewareContext[Any]], Awaitable[Any]]
"""What a hook calls to pass the request on: `await call_next(ctx)` gives the result of
the rest of the chain and the handler."""


class Host(Protocol):
    """What a middleware is told of the server it is added to."""

    @property
    def core(self) -> ServerCore: ...


_Link = Callable[[MiddlewareContext[Any]], Awaitable[Any]]


class Middleware:
    """Override the hooks you need; each default passes the request on unchanged (and
    costs nothing: a hook left as it is is not in the chain).

    `inline = True` promises that the hooks need no asyncio task of their own before
    they wait for something, or `await ctx.own_task()` first (before `asyncio.timeout`,
    a task group or a network client): a request none of whose middleware waits is
    then answered without a task, which costs far less (docs/performance.md)."""

    inline: bool = False

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        return await call_next(ctx)

    async def on_call_tool(
        self, ctx: MiddlewareContext[t.CallToolRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_list_tools(
        self, ctx: MiddlewareContext[t.PaginatedRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_list_resources(
        self, ctx: MiddlewareContext[t.PaginatedRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_list_resource_templates(
        self, ctx: MiddlewareContext[t.PaginatedRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_list_prompts(
        self, ctx: MiddlewareContext[t.PaginatedRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_read_resource(
        self, ctx: MiddlewareContext[t.ReadResourceRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_get_prompt(
        self, ctx: MiddlewareContext[t.GetPromptRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_complete(
        self, ctx: MiddlewareContext[t.CompleteRequestParams], call_next: CallNext
    ) -> Any:
        return await call_next(ctx)

    async def on_notification(
        self, ctx: NotificationContext, call_next: Callable[[NotificationContext], Awaitable[None]]
    ) -> None:
        await call_next(ctx)

    def bind(self, host: Host) -> None:
        """Called once when the middleware is added to a server (`host`: the `Server`;
        a policy that needs its core, e.g. to announce list changes, keeps it here)."""


def _overrides(middleware: Middleware, hook: str) -> bool:
    return getattr(type(middleware), hook) is not getattr(Middleware, hook)


def _link(hook: Callable[[Any, Any], Awaitable[Any]], nxt: Any) -> Any:
    def link(ctx: Any) -> Awaitable[Any]:
        return hook(ctx, nxt)

    return link


def _innermost(method: str, spec: MethodSpec) -> _Link:
    """The handler at the end of a chain: the method's own (a list's as a result
    struct), or the work of a task when the context carries one."""
    handler = TYPED_LISTS.get(method, spec.handler)
    result_type = t.METHODS[method].result if method in t.METHODS else None

    async def innermost(ctx: MiddlewareContext[Any]) -> Any:
        if ctx.work is not None:
            return await ctx.work()
        out = handler(ctx.core, ctx._session, ctx.call, ctx.params)  # type: ignore[arg-type]
        if type(out) is CoroutineType:
            out = await out
        if type(out) is msgspec.Raw and result_type is not None:  # server/discover
            out = msgspec.json.decode(out, type=result_type)
        return out

    return innermost


def _in_chain(m: Middleware, method: str) -> bool:
    hook = HOOKS.get(method)
    return _overrides(m, "on_request") or (hook is not None and _overrides(m, hook))


def _chain(middleware: Sequence[Middleware], method: str, inner: _Link) -> _Link:
    hook = HOOKS.get(method)
    for m in reversed(middleware):
        if hook is not None and _overrides(m, hook):
            inner = _link(getattr(m, hook), inner)
        if _overrides(m, "on_request"):
            inner = _link(m.on_request, inner)
    return inner


def _handler(chain: _Link, tool_call: bool, inline: bool) -> Any:
    """The method's handler in the core's table. When every middleware in the chain is
    `inline`, it runs the chain's first step at once, so a request that never waits (a
    sync handler) is answered without an asyncio task of its own, as it would be with
    no middleware; otherwise the chain runs as pending work, in a task."""

    def pending(core: ServerCore, session: Session, call: Call, params: Any) -> Any:
        call.params = params
        return _run(chain, MiddlewareContext(params, call, core, session), tool_call)

    if not inline:
        return pending

    def handler(core: ServerCore, session: Session, call: Call, params: Any) -> Any:
        call.params = params
        ctx = MiddlewareContext(params, call, core, session)
        ctx.inline = True
        coro = _run(chain, ctx, tool_call)
        try:
            step = coro.send(None)
        except StopIteration as stop:
            return stop.value
        except InputPending as pending:  # an await-style round, as `Session._await` ends one
            return awaited_round(pending)
        finally:
            ctx.inline = False
        return resume(coro, step)

    return handler


async def _run(chain: _Link, ctx: MiddlewareContext[Any], tool_call: bool) -> Any:
    try:
        return await chain(ctx)
    except ToolError as exc:
        if tool_call:
            return exc.result
        raise


class Chains:
    """What a core serves with when middleware is registered: its method table, the
    chain a task's work goes through, and the notification chain."""

    def __init__(self, middleware: Sequence[Middleware]) -> None:
        self.methods: dict[str, MethodSpec] = {}
        self.tool_chain: _Link | None = None
        for name, spec in METHODS.items():
            chain = _chain(middleware, name, _innermost(name, spec))
            if name == "tools/call":
                self.tool_chain = chain
            inline = all(m.inline for m in middleware if _in_chain(m, name))
            handler = _handler(chain, name == "tools/call", inline)
            self.methods[name] = msgspec.structs.replace(spec, handler=handler)
        notify: Any = _notified
        for m in reversed(middleware):
            if _overrides(m, "on_notification"):
                notify = _link(m.on_notification, notify)
        self.notify = notify

    async def task_step(
        self, core: ServerCore, call: Call, work: Callable[[], Awaitable[Any]]
    ) -> Any:
        """One run of a task's work (in the runner), through the `tools/call` chain."""
        assert self.tool_chain is not None
        ctx = MiddlewareContext(call.params, call, core, None, "task", work)
        return await _run(self.tool_chain, ctx, True)

    def notification(self, session: Session, frame: rpc.Frame, channel: Channel) -> Pending:
        """A client notification through the chain, as pending work of its own."""
        return Pending(None, self._notify(NotificationContext(frame, session, channel)))

    async def _notify(self, ctx: NotificationContext) -> None:
        try:
            await self.notify(ctx)
        except Exception:  # nobody waits for an answer: the operator gets the traceback
            log.exception("middleware failed on %s", ctx.method)


async def _notified(ctx: NotificationContext) -> None:
    ctx.session._notification(ctx.frame)


def adopted(middleware: Middleware, host: Host) -> Middleware:
    """`middleware`, told of the server it is added to (anything else is refused)."""
    if not isinstance(middleware, Middleware):
        raise ConfigurationError(f"not a Middleware: {middleware!r}")
    middleware.bind(host)
    return middleware


def added(
    stack: list[Middleware], middleware: Middleware, host: Host, core: ServerCore | None
) -> None:
    """Add `middleware` to the innermost end of `stack`; a running `core` serves the
    next request with the chains composed here, once."""
    stack.append(adopted(middleware, host))
    if core is not None:
        core.use(*serving(stack))


def serving(middleware: Sequence[Middleware]) -> tuple[Mapping[str, MethodSpec], Chains | None]:
    """The method table a core serves with `middleware`, and its chains: with none,
    the plain table (the path without middleware, untouched) and None."""
    if not middleware:
        return METHODS, None
    chains = Chains(middleware)
    return chains.methods, chains
