"""Client middleware and retries, wrapped around a `Connection`'s requests.

A middleware is an async function `(request, call_next) -> result` (or an object
with such an `on_request` method, the shape of a server `Middleware`'s hook): `request` is a
`ClientRequest` (method, params, timeout), `call_next(request)` sends it on (to the
next middleware, finally to the server) and returns the typed result. It may log,
time, change the request (`msgspec.structs.replace`), change the result, answer
without calling `call_next`, or raise. Middleware runs in list order, the first
outermost, around every request the client sends once connected: lists, reads, tool
calls (one logical call: its input rounds happen inside), tasks and pings. The era
probe and `initialize` at connect time are not requests a middleware sees.

A `RetryPolicy` resends an idempotent request (lists, reads, discovery, ping,
`tasks/get`) after a transport failure that a new attempt may not meet (the server
unreachable, an HTTP 429/502/503/504, the transport's own timeout), with exponential
backoff; a JSON-RPC error, a request timeout (unless `timeouts=True`) and anything not
idempotent are never resent. It also retries the era probe and `initialize` when
the client connects. Retries happen inside `call_next`: a middleware sees one request.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeAlias, TypeVar

import msgspec

from mcpgen._errors import (
    ConfigurationError,
    ConnectError,
    HttpStatusError,
    RequestTimeoutError,
    TransportTimeoutError,
)
from mcpgen.client._connection import Connection

__all__ = [
    "IDEMPOTENT",
    "ClientCallNext",
    "ClientMiddleware",
    "ClientRequest",
    "RequestHook",
    "RetryPolicy",
    "install",
]

T = TypeVar("T")

IDEMPOTENT = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/get",
        "completion/complete",
        "tasks/get",
    }
)


class ClientRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request as client middleware sees it: the JSON-RPC `method`, its `params`
    (without `_meta`, which the client adds), and its `timeout` in seconds (None:
    the client's default)."""

    method: str
    params: dict[str, Any] | None = None
    timeout: float | None = None


ClientCallNext: TypeAlias = Callable[[ClientRequest], Awaitable[Any]]
"""Sends a request on to the next middleware (finally the server); its result."""


class RequestHook(Protocol):
    """A middleware object: its `on_request` is the hook, as on a server `Middleware`."""

    def on_request(self, request: ClientRequest, call_next: ClientCallNext) -> Awaitable[Any]: ...


ClientMiddleware: TypeAlias = (
    Callable[[ClientRequest, ClientCallNext], Awaitable[Any]] | RequestHook
)
"""`async def middleware(request: ClientRequest, call_next: ClientCallNext) -> result`,
or an object whose `on_request` method is that function."""


class RetryPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Resend idempotent requests after transport failures (see the module docstring):
    at most `attempts` tries in all, waiting `backoff` seconds after the first failure,
    `multiplier` times longer after each further one, never more than `max_delay`,
    each wait varied by up to `jitter` (a fraction) so that clients spread out.
    `methods`: the requests that may be resent; `timeouts=True` resends after a
    request timeout too."""

    attempts: int = 3
    backoff: float = 0.2
    multiplier: float = 2.0
    max_delay: float = 5.0
    jitter: float = 0.1
    methods: frozenset[str] = IDEMPOTENT
    timeouts: bool = False

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ConfigurationError("RetryPolicy.attempts must be at least 1")
        if self.backoff < 0 or self.max_delay < 0 or not 0 <= self.jitter < 1:
            raise ConfigurationError("RetryPolicy: negative waits, or jitter outside [0, 1)")

    def retries(self, method: str, error: BaseException) -> bool:
        """Whether a failed `method` may be sent again after `error`."""
        if method not in self.methods:
            return False
        if isinstance(error, RequestTimeoutError):
            return self.timeouts
        if isinstance(error, HttpStatusError):
            return error.status in (429, 502, 503, 504)
        return isinstance(error, ConnectError | TransportTimeoutError)

    def delay(self, failures: int) -> float:
        """The wait after the `failures`-th failure."""
        wait = min(self.max_delay, self.backoff * self.multiplier ** (failures - 1))
        return wait * (1 + random.uniform(-self.jitter, self.jitter))

    async def run(self, method: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """`attempt()` until it succeeds, fails for good, or the tries run out."""
        failures = 0
        while True:
            try:
                return await attempt()
            except Exception as exc:
                failures += 1
                if failures >= self.attempts or not self.retries(method, exc):
                    raise
            await asyncio.sleep(self.delay(failures))


def install(
    connection: Connection,
    middleware: list[ClientMiddleware],
    retry: RetryPolicy | None,
) -> bool:
    """Route `connection`'s requests through `middleware` (list order, first
    outermost; the list is read at each request, so appending to it adds one) and
    `retry`. Nothing changes when both are empty: False."""
    if not middleware and retry is None:
        return False
    request, raw_request, select = (
        connection.request,
        connection.raw_request,
        connection._select_era,
    )
    chain = middleware

    def through(send: Callable[[ClientRequest], Awaitable[Any]]) -> ClientCallNext:
        call: ClientCallNext = send
        if retry is not None:
            plain = call

            async def retried(req: ClientRequest) -> Any:
                return await retry.run(req.method, lambda: plain(req))

            call = retried
        for each in reversed(chain):
            call = _link(each, call)
        return call

    async def wrapped_request(
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Any = None,
        tasks: bool = False,
    ) -> msgspec.Struct:
        async def send(req: ClientRequest) -> Any:
            return await request(
                req.method, req.params, timeout=req.timeout, progress=progress, tasks=tasks
            )

        result: msgspec.Struct = await through(send)(
            ClientRequest(method=method, params=params, timeout=timeout)
        )
        return result

    async def wrapped_raw(
        method: str,
        params: dict[str, Any],
        *,
        capabilities: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> msgspec.Raw | None:
        async def send(req: ClientRequest) -> Any:
            return await raw_request(
                req.method, req.params or {}, capabilities=capabilities, timeout=req.timeout
            )

        result: msgspec.Raw | None = await through(send)(
            ClientRequest(method=method, params=params, timeout=timeout)
        )
        return result

    connection.request = wrapped_request  # type: ignore[method-assign]
    connection.raw_request = wrapped_raw  # type: ignore[method-assign]
    if retry is not None:

        async def select_era() -> None:
            await retry.run("initialize", select)

        connection._select_era = select_era  # type: ignore[method-assign]
    return True


def _link(middleware: ClientMiddleware, call_next: ClientCallNext) -> ClientCallNext:
    hook: Any = getattr(middleware, "on_request", middleware)

    async def call(request: ClientRequest) -> Any:
        return await hook(request, call_next)

    return call
