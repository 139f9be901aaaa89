"""Input requests across the bridge: an upstream call that asks for input while it is
being forwarded.

The upstream `Client`'s input callbacks (elicitation, sampling, roots) land in
`InputBridge.ask`. The forwarded call runs as its own asyncio task (a `PendingCall`),
so it can outlive one downstream round: the downstream handler waits for whichever comes
first, the upstream's final result or its next input request, and answers the latter
with `InputRequired` whose state names the pending call. The library turns that into
an input-required result with sealed `requestState` (modern client) or into a real
server-to-client request (legacy session) and calls the handler again with the answer;
the answer goes upstream as the reply (legacy upstream) or the next round's
`inputResponses` (modern upstream), and the upstream call simply goes on.

The same path serves all four era combinations. A pending call lives in this process
only: a continuation that reaches another worker finds no call and fails, unless a
shared bus carries it to the owner (`remote`, see `_route`).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import msgspec

from mcpgen._errors import McpError
from mcpgen._server._context import Context, InputRequired
from mcpgen_types import latest as t

__all__ = ["GONE", "PENDING", "InputBridge", "Start"]

log = logging.getLogger("mcpgen.proxy")

PENDING: Final = "mcpgen/proxy-call"  # the handler-state key naming the pending call
GONE: Final = (
    "the upstream call this request continues is gone (it timed out, or another proxy "
    "process holds it)"
)
GATHER_SECONDS: Final = 0.05  # how long after an input request the next one still joins it

Progress = Callable[[float, float | None, str | None], None]
Start = Callable[[Progress], Awaitable[msgspec.Struct]]


class _Ask(msgspec.Struct):
    request: Any  # an input request struct (ElicitRequest, CreateMessageRequest, ...)
    answer: asyncio.Future[Any]


class PendingCall:
    """One forwarded upstream request and the input requests it is waiting on."""

    __slots__ = ("asks", "ctx", "id", "open", "seq", "task", "timer")

    def __init__(self, ctx: Context) -> None:
        self.id = secrets.token_urlsafe(16)
        self.ctx: Context | None = ctx  # None: a round continued from another process
        self.asks: asyncio.Queue[_Ask] = asyncio.Queue()
        self.open: dict[str, _Ask] = {}
        self.seq = 0
        self.task: asyncio.Task[msgspec.Struct] | None = None
        self.timer: asyncio.TimerHandle | None = None

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.ctx is not None:
            self.ctx.progress(progress, total, message)


class InputBridge:
    """The pending calls of one proxy (see the module docstring). `timeout`: seconds a
    downstream client gets to come back with its answers before the upstream call is
    cancelled."""

    def __init__(self, timeout: float, roots: Sequence[str] | None = None) -> None:
        self.timeout = timeout
        # The roots the operator gave (`roots=`, `--root`): the upstream's answer.
        self.configured_roots = None if roots is None else list(roots)
        self._roots_said = False
        self.calls: dict[str, PendingCall] = {}  # by id: waiting for a downstream round
        self.running: set[PendingCall] = set()
        # With a shared bus: continues a call this process does not hold (`_route`).
        self.remote: Callable[[str, Mapping[str, Any]], Awaitable[Any]] | None = None
        self._current: contextvars.ContextVar[PendingCall | None] = contextvars.ContextVar(
            "mcpgen_proxy_call", default=None
        )

    # -- the upstream client's callbacks ---------------------------------------------------
    async def ask(self, request: Any) -> Any:
        """Hand an upstream input request to the downstream client; its answer."""
        call = self._current.get() or self._sole()
        if call is None:
            raise McpError(
                t.INTERNAL_ERROR, "the proxy cannot tell which forwarded call this request is for"
            )
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        call.asks.put_nowait(_Ask(request, answer))
        return await answer

    def _sole(self) -> PendingCall | None:
        # A legacy upstream's server-to-client request arrives outside the call's task
        # (nothing in it names the request it serves). A call waiting for its client's
        # next round asks nothing new, so the one call still running is the asker; with
        # several, the request could be any one's and is refused.
        asking = [call for call in self.running if call.id not in self.calls]
        return asking[0] if len(asking) == 1 else None

    def log(self, level: str, data: Any, logger: str | None) -> None:
        """An upstream log message goes to the client of the call it is about (the one
        running call); the downstream request's own level decides whether it is sent."""
        call = self._current.get() or self._sole()
        if call is not None and call.ctx is not None:
            call.ctx.log(level, data, logger)

    async def elicit(self, params: t.ElicitRequestParams) -> Any:
        return await self.ask(t.ElicitRequest(params=params))

    async def sample(self, params: t.CreateMessageRequestParams) -> Any:
        return await self.ask(t.CreateMessageRequest(params=params))

    async def roots(self) -> Any:
        """The configured roots; else the roots of the client whose call is forwarded; else
        (a request outside any call, as some servers send right after `initialize`) none,
        said once on the log."""
        if self.configured_roots is not None:
            return self.configured_roots
        if self._current.get() is None and self._sole() is None:
            if not self._roots_said:
                self._roots_said = True
                log.info(
                    "the upstream asked for roots outside any forwarded call; "
                    "it gets none (give the proxy roots to answer with)"
                )
            return []
        return await self.ask(t.ListRootsRequest())

    # -- the downstream handler -----------------------------------------------------------
    async def forward(self, ctx: Context, start: Start) -> Any:
        """Serve one downstream round of a forwarded request: its upstream result, or
        `InputRequired` for the upstream's next input request."""
        state = ctx.state
        if type(state) is dict and PENDING in state:
            call_id = state[PENDING]
            if self.remote is not None and call_id not in self.calls:
                return await self.remote(str(call_id), ctx.input_responses)
            call = self._resume(call_id, ctx.input_responses, ctx)
        else:
            call = PendingCall(ctx)
            token = self._current.set(call)
            try:  # the task copies the context: the callbacks it runs see the call
                call.task = asyncio.ensure_future(start(call.progress))
            finally:
                self._current.reset(token)
            self.running.add(call)
        try:
            return await self._next(call)
        except BaseException:
            self._end(call)
            raise

    async def resume(self, call_id: str, responses: Mapping[str, Any]) -> Any:
        """Continue the parked call `call_id` with `responses` for a round that reached
        another process: its outcome, as `forward`'s (progress and logs are dropped)."""
        call = self._resume(call_id, responses, None)
        try:
            return await self._next(call)
        except BaseException:
            self._end(call)
            raise

    def _resume(
        self, call_id: object, responses: Mapping[str, Any], ctx: Context | None
    ) -> PendingCall:
        call = self.calls.pop(call_id, None) if isinstance(call_id, str) else None
        if call is None:
            raise McpError(t.INVALID_PARAMS, GONE)
        if call.timer is not None:
            call.timer.cancel()
        call.ctx = ctx
        for key, ask in list(call.open.items()):
            answer = responses.get(key)
            if answer is not None:  # unanswered ones are asked again
                del call.open[key]
                if not ask.answer.done():  # the upstream may have given up meanwhile
                    ask.answer.set_result(answer)
        return call

    async def _next(self, call: PendingCall) -> Any:
        task = call.task
        assert task is not None
        if call.open:
            return self._round(call, [])
        getter = asyncio.ensure_future(call.asks.get())
        try:
            await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getter.done():
                getter.cancel()
        if getter.done() and not getter.cancelled():
            asks = [getter.result()]
            # A legacy upstream sends a round's requests one after the other: gather
            # the burst, so that the client gets them in one round as a modern one would.
            while True:
                try:
                    asks.append(await asyncio.wait_for(call.asks.get(), GATHER_SECONDS))
                except TimeoutError:
                    break
            return self._round(call, asks)
        self._end(call)
        return task.result()

    def _round(self, call: PendingCall, asks: list[_Ask]) -> InputRequired:
        """Ask the downstream client the open requests and `asks`; park the call."""
        for ask in asks:
            call.open[f"upstream.{call.seq}"] = ask
            call.seq += 1
        self.calls[call.id] = call
        loop = asyncio.get_running_loop()
        call.timer = loop.call_later(self.timeout, self._expire, call.id)
        requests = {key: ask.request for key, ask in call.open.items()}
        return InputRequired(requests, state={PENDING: call.id})

    def _expire(self, call_id: str) -> None:
        call = self.calls.pop(call_id, None)
        if call is not None:
            self._end(call)

    def _end(self, call: PendingCall) -> None:
        self.running.discard(call)
        self.calls.pop(call.id, None)
        if call.timer is not None:
            call.timer.cancel()
        if call.task is not None and not call.task.done():
            call.task.cancel()
        for ask in call.open.values():
            if not ask.answer.done():
                ask.answer.cancel()

    def close(self) -> None:
        for call in list(self.running):
            self._end(call)
