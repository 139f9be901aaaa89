"""Calling a user's handler: awaited (async), inline (sync, `threaded=False`, or no
runner), or handed to the server's `SyncRunner` (sync, the default when the server has
one). A threaded call comes back as a coroutine, exactly as an async handler's does,
so the session treats both alike: pending work, bound to the request's cancellation.

The core stays sans-I/O: it never sees a thread, only the runner it was given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen._errors import McpError
from mcpgen._server._call import Call
from mcpgen._server._content import failure, to_call_result
from mcpgen._server._context import Context, InputRequired
from mcpgen._server._defs import CompletionDef, ToolDef

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore, SyncRunner

__all__ = ["Invocable", "complete_with", "invoke", "tool_async", "tool_threaded", "with_context"]


class Invocable(Protocol):
    """A resource, template or prompt entry, as far as calling its handler goes."""

    @property
    def fn(self) -> Callable[..., Any] | None: ...  # a static resource has none (never here)
    @property
    def is_async(self) -> bool: ...
    @property
    def context_param(self) -> str | None: ...
    @property
    def threaded(self) -> bool: ...


def with_context(core: ServerCore, call: Call) -> Context:
    """The handler's `Context`; the call carries the server's lifespan value with it
    (also into a task, which copies it)."""
    call.lifespan = core.lifespan
    call.core = core
    return Context(call)


# -- tools -----------------------------------------------------------------------------------
# A tool's result, `InputRequired` or failure (an error result; an `McpError` passes
# through), as a coroutine. `call_tool` runs an inline sync tool itself: no extra frame.
async def tool_async(core: ServerCore, tool: ToolDef, kwargs: dict[str, Any]) -> Any:
    try:
        value = await tool.fn(**kwargs)
    except McpError:
        raise
    except Exception as exc:
        return failure(tool.name, exc, core.mask_errors)
    return value if isinstance(value, InputRequired) else to_call_result(value, tool.definition)


async def tool_threaded(core: ServerCore, tool: ToolDef, kwargs: dict[str, Any], call: Call) -> Any:
    assert core.run_sync is not None  # checked by the caller
    job = functools.partial(tool.fn, **kwargs)
    try:
        value = await core.run_sync(job, call if tool.context_param is not None else None)
    except McpError:
        raise
    except Exception as exc:
        return failure(tool.name, exc, core.mask_errors)
    return value if isinstance(value, InputRequired) else to_call_result(value, tool.definition)


# -- resources, templates, prompts -------------------------------------------------------------
def invoke(
    core: ServerCore,
    entry: Invocable,
    kwargs: dict[str, Any],
    call: Call,
    done: Callable[[Any], Any],
) -> Any:
    """Run a resource reader or prompt: `done(value)`, or a coroutine resolving to it.
    Exceptions propagate (the session logs them and answers an internal error)."""
    fn: Any = entry.fn
    ctx = entry.context_param
    if ctx is not None:
        kwargs[ctx] = with_context(core, call)
    if entry.is_async:
        return _invoke_async(fn, kwargs, done)
    runner = core.run_sync
    if runner is not None and entry.threaded:
        job = functools.partial(fn, **kwargs)
        return _invoke_threaded(runner, job, call if ctx is not None else None, done)
    return done(fn(**kwargs))


async def _invoke_async(fn: Any, kwargs: dict[str, Any], done: Callable[[Any], Any]) -> Any:
    return done(await fn(**kwargs))


async def _invoke_threaded(
    runner: SyncRunner, job: Callable[[], Any], call: Call | None, done: Callable[[Any], Any]
) -> Any:
    # The runner is called in here, not by the caller: work cancelled before it starts
    # leaves no coroutine that was never awaited.
    return done(await runner(job, call))


async def _then(awaitable: Any, done: Callable[[Any], Any]) -> Any:
    return done(await awaitable)


# -- completion ------------------------------------------------------------------------------
def complete_with(
    core: ServerCore, target: CompletionDef, args: list[Any], done: Callable[[Any], Any]
) -> Any:
    """Run a completion handler with positional `args`: `done(value)` or a coroutine."""
    if target.is_async:
        return _then(target.fn(*args), done)
    runner = core.run_sync
    if runner is not None and target.threaded:
        return _invoke_threaded(runner, functools.partial(target.fn, *args), None, done)
    return done(target.fn(*args))
