"""Rate limits: token buckets per caller, per tool and for the whole server."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext
from mcpgen.stores._limits import Bucket, InMemoryRateLimitStore, RateLimitStore

__all__ = ["RATE_LIMITED", "Rate", "RateLimit", "caller_of"]

RATE_LIMITED: Final = -32029
"""The JSON-RPC error code of a request refused by a rate limit."""


class Rate(msgspec.Struct, frozen=True):
    """`per_second` requests a second on average, `burst` at once (default: one
    second's worth, at least 1)."""

    per_second: float
    burst: float | None = None

    def __post_init__(self) -> None:
        if not self.per_second > 0 or (self.burst is not None and not self.burst >= 1):
            raise ConfigurationError(f"{self!r}: per_second must be > 0 and burst >= 1")

    @property
    def capacity(self) -> float:
        return self.burst if self.burst is not None else max(1.0, self.per_second)


def caller_of(ctx: MiddlewareContext[Any]) -> str:
    """Who a request counts against: its principal, else its network address, else
    one shared "anonymous" caller (stdio: the one client of the process)."""
    return ctx.principal or ctx.peer or "anonymous"


class RateLimit(Middleware):
    """Refuse requests over a rate with -32029 and `data = {"retryAfterSeconds": s}`.

    `per_caller`: each caller's own bucket (`key(ctx)`, by default `caller_of`);
    `per_tool`: a bucket per tool name, shared by all callers (`tools/call` only);
    `per_caller_tool`: one per (caller, tool); `global_`: one for every request.
    A request takes one token from each bucket that applies, all or none. `methods`
    limits which methods count (default: every request, but not notifications).
    `store`: where the buckets live (default in this process; a
    `mcpgen.stores.redis.RedisRateLimitStore` shares them between workers)."""

    def __init__(
        self,
        *,
        per_caller: Rate | None = None,
        per_tool: Mapping[str, Rate] | None = None,
        per_caller_tool: Rate | None = None,
        global_: Rate | None = None,
        methods: frozenset[str] | None = None,
        key: Callable[[MiddlewareContext[Any]], str] = caller_of,
        store: RateLimitStore | None = None,
        prefix: str = "",
    ) -> None:
        self.per_caller = per_caller
        self.per_tool = dict(per_tool or {})
        self.per_caller_tool = per_caller_tool
        self.global_ = global_
        self.methods = methods
        self.key = key
        self.store: RateLimitStore = store if store is not None else InMemoryRateLimitStore()
        self.prefix = prefix
        # The buckets every request (of the tool) shares, made once.
        self._global = (
            () if global_ is None else (Bucket(prefix + "g", global_.per_second, global_.capacity),)
        )
        self._tools = {
            name: Bucket(f"{prefix}t:{name}", rate.per_second, rate.capacity)
            for name, rate in self.per_tool.items()
        }
        # Inline (no task of its own) while the buckets are in memory: nothing waits.
        self.inline = isinstance(self.store, InMemoryRateLimitStore)

    def buckets(self, ctx: MiddlewareContext[Any]) -> list[Bucket]:
        """The buckets this request takes a token from."""
        found = list(self._global)
        p = self.prefix
        caller = self.key(ctx) if self.per_caller or self.per_caller_tool else ""
        if self.per_caller is not None:
            rate = self.per_caller
            found.append(Bucket(f"{p}c:{caller}", rate.per_second, rate.capacity))
        if ctx.method == "tools/call":
            name = ctx.params.name
            tool_bucket = self._tools.get(name)
            if tool_bucket is not None:
                found.append(tool_bucket)
            if self.per_caller_tool is not None:
                rate = self.per_caller_tool
                # A name no tool has shares one bucket per caller: made-up names must not
                # make a bucket each (pushing the caller's real ones out of memory).
                tool = name if ctx.tool() is not None else ""
                found.append(Bucket(f"{p}ct:{caller}:{tool}", rate.per_second, rate.capacity))
        return found

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        if ctx.step == "task" or (self.methods is not None and ctx.method not in self.methods):
            return await call_next(ctx)  # a task's work was counted when it was created
        buckets = self.buckets(ctx)
        if buckets:
            wait = await self.store.take(buckets)
            if wait > 0:
                after = math.ceil(wait * 1000) / 1000
                raise McpError(
                    RATE_LIMITED,
                    f"rate limit exceeded for {ctx.method}: retry in {after:g} s",
                    {"retryAfterSeconds": after},
                )
        return await call_next(ctx)
