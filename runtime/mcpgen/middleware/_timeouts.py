"""Timeouts: a limit on how long a request (or a task's work) may run on the server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Final

from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext

__all__ = ["REQUEST_TIMEOUT", "Timeouts"]

log = logging.getLogger("mcpgen.server")

REQUEST_TIMEOUT: Final = -32001
"""The JSON-RPC error code of a request the server stopped at its time limit."""


def _seconds(value: float | None, what: str) -> float | None:
    if value is not None and not value > 0:
        raise ConfigurationError(f"{what} must be a positive number of seconds, not {value!r}")
    return value


class Timeouts(Middleware):
    """Stop a request that runs longer than its limit: the handler is cancelled (its
    `finally` blocks and context managers run) and the caller gets a -32001 error
    naming the limit, with `data = {"timeoutSeconds": limit}`.

    The limit of a request is, first found: the tool's own (`@server.tool(timeout=)`),
    `methods[method]`, `default` (None: no limit). The work of a task (the Tasks
    extension) has `task` instead (None: no limit): the task fails with the same
    error. A sync handler running in a worker thread cannot be interrupted: the
    request ends at the limit, the thread runs on until the function returns, and its
    result is dropped (logged as a warning). A sync tool registered with
    `threaded=False` blocks the event loop and cannot be stopped at all: it gets no
    limit."""

    def __init__(
        self,
        default: float | None = None,
        *,
        task: float | None = None,
        methods: Mapping[str, float] | None = None,
    ) -> None:
        self.default = _seconds(default, "default")
        self.task = _seconds(task, "task")
        self.methods = {m: _seconds(v, f"methods[{m!r}]") for m, v in (methods or {}).items()}

    # Inline: a request with no limit, or one nothing can interrupt, passes without a
    # task; the others wait one loop turn for the task their time limit needs.
    inline = True

    def limit(self, ctx: MiddlewareContext[Any]) -> float | None:
        """The limit of this request or task run, in seconds (None: none)."""
        if ctx.step == "task":
            return self.task
        if ctx.method == "tools/call":
            tool = ctx.tool()
            if tool is not None:
                if not tool.is_async and not tool.threaded and tool.task is None:
                    return None  # runs on the loop's thread: nothing could stop it
                if tool.timeout is not None:
                    return float(tool.timeout)
        return self.methods.get(ctx.method, self.default)

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        limit = self.limit(ctx)
        if limit is None:
            return await call_next(ctx)
        await ctx.own_task()  # the timeout cancels this request's task, not another
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                return await call_next(ctx)
        except TimeoutError:
            if not scope.expired():
                raise  # the handler's own TimeoutError: not ours to rename
        what = ctx.method
        if ctx.method == "tools/call":
            what = f"tool {ctx.params.name!r}"
            tool = ctx.tool()
            if tool is not None and not tool.is_async and tool.threaded:
                log.warning(
                    "tool %r passed its %g s limit; its worker thread runs on until the "
                    "function returns (its result is dropped)",
                    tool.name,
                    limit,
                )
        step = " (task)" if ctx.step == "task" else ""
        raise McpError(
            REQUEST_TIMEOUT,
            f"{what}{step} timed out: it ran longer than the server's limit of {limit:g} s",
            {"timeoutSeconds": limit},
        )
