"""A response size limit, and a structured record (with its timing) of every request."""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import msgspec

from mcpgen._errors import McpError
from mcpgen._server._context import InputRequired
from mcpgen._server._middleware import CallNext, Middleware, MiddlewareContext

__all__ = ["RESPONSE_TOO_LARGE", "RequestLog", "SizeLimit"]

RESPONSE_TOO_LARGE: Final = -32013
"""The JSON-RPC error code of a result over the server's response size limit."""

_encode = msgspec.json.Encoder().encode


class SizeLimit(Middleware):
    """Answer a result larger than `max_bytes` (as JSON) with a -32013 error naming its
    size and the limit (`data = {"size": n, "limit": max_bytes}`), instead of sending it.
    `methods`: which methods it applies to (default: all)."""

    inline = True

    def __init__(self, max_bytes: int, *, methods: frozenset[str] | None = None) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_bytes = max_bytes
        self.methods = methods

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if (self.methods is not None and ctx.method not in self.methods) or not isinstance(
            result, msgspec.Struct
        ):
            return result
        size = len(_encode(result))
        if size > self.max_bytes:
            raise McpError(
                RESPONSE_TOO_LARGE,
                f"the result of {ctx.method} is {size:,} bytes, over the server's limit "
                f"of {self.max_bytes:,} bytes",
                {"size": size, "limit": self.max_bytes},
            )
        return result


class RequestLog(Middleware):
    """One log record per request on `logger` (default `mcpgen.requests`, level INFO):
    the message `method=... era=... outcome=... ms=...`, and the same fields as a dict
    in the record's `mcp` attribute (for a JSON formatter). `outcome` is "ok",
    "input_required", "tool_error" (a result with isError) or "error <code>"; no
    arguments or results are logged (they may hold secrets)."""

    inline = True

    def __init__(
        self, logger: logging.Logger | str = "mcpgen.requests", level: int = logging.INFO
    ) -> None:
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    async def on_request(self, ctx: MiddlewareContext[Any], call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            result = await call_next(ctx)
        except McpError as exc:
            self._record(ctx, f"error {exc.code}", started)
            raise
        except Exception:
            self._record(ctx, "error -32603", started)
            raise
        outcome = "ok"
        if isinstance(result, InputRequired):
            outcome = "input_required"
        elif getattr(result, "is_error", None) is True:
            outcome = "tool_error"
        self._record(ctx, outcome, started)
        return result

    def _record(self, ctx: MiddlewareContext[Any], outcome: str, started: float) -> None:
        if not self.logger.isEnabledFor(self.level):
            return
        fields: dict[str, Any] = {
            "method": ctx.method,
            "era": ctx.era,
            "request_id": ctx.request_id,
            "principal": ctx.principal,
            "step": ctx.step,
            "outcome": outcome,
        }
        name = getattr(ctx.params, "name", None) or getattr(ctx.params, "uri", None)
        if isinstance(name, str):
            fields["target"] = name
        if ctx.task_id is not None:
            fields["task_id"] = ctx.task_id
        fields["ms"] = round((time.perf_counter() - started) * 1000, 3)
        text = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        self.logger.log(self.level, "%s", text, extra={"mcp": fields})
