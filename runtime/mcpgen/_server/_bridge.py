"""Legacy sessions: a handler's input requests become real server-to-client requests.

The same MRTR-style handler serves both eras. In a legacy session each input request
goes out as a JSON-RPC request in the session's revision; the client's answers
(inbound response frames) are typed like modern input responses, and once a round is
complete the handler runs again with them, until it returns a result.

An awaited input request (`await ctx.elicit(...)`, see `_awaits`) goes out the same
way, but the handler waits for its answer where it is (`request`): no new run. It waits
on a future of the event loop the session was given (`Loop`; the core imports no I/O
module), for at most its timeout, and cancelling the call cancels the request.

Outbound request ids start at a random point per bridge: with several workers, the
same session may be live on each (rebuilt from its stored state), and a client's
answer that reaches another worker is forwarded to all of them on the bus
(`ReplyEvent`, see `transports/_sessions`); only the bridge that sent that id acts.

A `Session` holds one `LegacyBridge` per `initialize` handshake. The bridge knows the
session's revision and the client's capabilities, and nothing else of it: to run a
handler again it calls the continuation the session gave it with the round.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Final, Protocol

import msgspec

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._awaits import check_mixing
from mcpgen._server._call import DEFERRED, Call, Channel, Outcome, RequestId, settle
from mcpgen._server._context import InputRequired
from mcpgen._server._mrtr import input_request_method, input_response, legacy_input_request
from mcpgen_types import latest as t
from mcpgen_types.latest import INTERNAL_ERROR

__all__ = ["MAX_ROUNDS", "LegacyBridge", "Loop", "loop_sleep"]

MAX_ROUNDS: Final = 16
NO_CHANNEL: Final = (
    "cannot send {method} to the client: no stream to it is open (the request takes"
    " no event stream and the session has no GET stream)"
)
_encode = msgspec.json.Encoder().encode

# Runs the handler of a call again (with `call.input_responses` and `call.state` set)
# and returns what the session's dispatch makes of it.
Rerun = Callable[[], Outcome]


class Waiter(Protocol):
    """A one-shot result slot a coroutine can await (an `asyncio.Future` is one)."""

    def done(self) -> bool: ...

    def set_result(self, result: Any, /) -> None: ...

    def set_exception(self, exception: BaseException, /) -> None: ...

    def cancel(self, msg: Any | None = None) -> bool: ...

    def __await__(self) -> Generator[Any, None, Any]: ...


class Timer(Protocol):
    def cancel(self) -> None: ...


class Loop(Protocol):
    """What awaiting a client's answer needs of the event loop (asyncio's is one)."""

    def create_future(self) -> Waiter: ...

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer: ...


def loop_sleep(loop: Callable[[], Loop] | None) -> Callable[[float], Awaitable[None]]:
    """A sleep on the event loop `loop` returns (the core imports no asyncio)."""

    async def sleep(seconds: float) -> None:
        if loop is None:
            raise ConfigurationError("this ServerCore was built without an event loop")
        waiter = loop().create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        loop().call_later(seconds, wake)
        await waiter

    return sleep


class _Awaited:
    """An awaited request out to the client: whose, which method, and its answer slot."""

    __slots__ = ("call", "future", "method")

    def __init__(self, call: Call, method: str, future: Waiter) -> None:
        self.call, self.method, self.future = call, method, future

    def settle(self, frame: rpc.Frame, kind: int) -> None:
        if self.future.done():
            return
        if kind == rpc.ERROR:
            message = f"the client did not answer {self.method}: {_error_text(frame.error)}"
            data = frame.error if isinstance(frame.error, dict) else None
            self.future.set_exception(McpError(INTERNAL_ERROR, message, data))
            return
        try:
            self.future.set_result(input_response(self.method, frame.result))
        except msgspec.ValidationError as exc:
            message = f"bad {self.method} result: {exc}"
            self.future.set_exception(McpError(proto.INVALID_PARAMS, message))


class _Round:
    """One round of a legacy request whose handler asked for input: requests are out."""

    __slots__ = ("call", "rerun", "state", "waiting")

    def __init__(self, call: Call, rerun: Rerun, state: Any) -> None:
        self.call, self.rerun, self.state = call, rerun, state
        self.waiting: dict[int, tuple[str, str]] = {}  # outbound id -> (key, method)


class LegacyBridge:
    """Input requests of one legacy session, sent as real requests and answered."""

    __slots__ = ("_next_id", "awaited", "caps", "loop", "outbound", "version")

    def __init__(
        self, version: str, caps: dict[str, Any], loop: Callable[[], Loop] | None = None
    ) -> None:
        self.version = version
        self.caps = caps  # the client's, as it declared them in `initialize`
        self.loop = loop  # the running event loop, for awaited requests
        self.outbound: dict[int, _Round] = {}
        self.awaited: dict[int, _Awaited] = {}
        # Random 32 bits, shifted: unique across workers, still exact as a JSON number.
        self._next_id = int.from_bytes(os.urandom(4), "big") << 16

    async def request(self, call: Call, request: Any, timeout: float | None) -> Any:
        """Send one input request for `call` and wait for the client's typed answer:
        McpError if the client lacks its capability or answers with an error,
        TimeoutError after `timeout` seconds (None: no limit)."""
        frame = legacy_input_request(self.version, self.caps, request)
        if self.loop is None:
            raise ConfigurationError("this ServerCore was built without an event loop")
        loop = self.loop()
        self._next_id += 1
        oid = self._next_id
        waiting = self.awaited[oid] = _Awaited(call, frame["method"], loop.create_future())
        if call.channel.request(_encode(t.JSONRPCRequest(id=oid, **frame))) is False:
            del self.awaited[oid]
            raise McpError(INTERNAL_ERROR, NO_CHANNEL.format(method=frame["method"]))
        timer = None
        if timeout is not None:
            timer = loop.call_later(timeout, lambda: self._expire(oid, timeout))
        try:
            return await waiting.future
        finally:
            if timer is not None:
                timer.cancel()
            if self.awaited.pop(oid, None) is not None:  # cancelled while it waited
                _cancel(call, oid, "the request that asked was cancelled")

    def _expire(self, oid: int, timeout: float) -> None:
        waiting = self.awaited.pop(oid, None)
        if waiting is None or waiting.future.done():
            return
        message = f"the client did not answer {waiting.method} within {timeout:g} s"
        waiting.future.set_exception(TimeoutError(message))
        _cancel(waiting.call, oid, "timed out")

    def ask(self, call: Call, out: InputRequired, rerun: Rerun) -> Outcome:
        """Send `out`'s input requests for `call` (DEFERRED: the reply comes once the
        client has answered them all), or, with state only, run the handler again now."""
        check_mixing(call, out.state)
        call.rounds += 1
        if call.rounds > MAX_ROUNDS:
            return rpc.error_frame(call.request_id, INTERNAL_ERROR, "too many input rounds")
        if not out.requests:  # state only: answer at once with the state
            call.state = out.state
            return rerun()
        pending = _Round(call, rerun, out.state)
        frames = []
        for key, request in out.requests.items():
            method = input_request_method(request)
            frame = legacy_input_request(self.version, self.caps, request)
            self._next_id += 1
            oid = self._next_id
            pending.waiting[oid] = (key, method)
            self.outbound[oid] = pending
            frames.append(_encode(t.JSONRPCRequest(id=oid, **frame)))
        for f in frames:
            if call.channel.request(f) is False:  # no way to the client: answer now
                for oid in pending.waiting:
                    self.outbound.pop(oid, None)
                method = input_request_method(next(iter(out.requests.values())))
                return rpc.error_frame(
                    call.request_id, INTERNAL_ERROR, NO_CHANNEL.format(method=method)
                )
        return DEFERRED

    def answer(self, frame: rpc.Frame, kind: int, channel: Channel) -> None:
        """A response frame from the client (`kind`: RESPONSE or ERROR); late or
        unsolicited ones are ignored."""
        if type(frame.id) is not int:
            return
        waiting = self.awaited.pop(frame.id, None)
        if waiting is not None:  # an awaited request: the handler resumes where it waits
            waiting.settle(frame, kind)
            return
        pending = self.outbound.pop(frame.id, None)
        if pending is None:
            return
        key, method = pending.waiting.pop(frame.id)
        call = pending.call
        if kind == rpc.ERROR or call.cancelled:
            for oid in pending.waiting:
                self.outbound.pop(oid, None)
            if not call.cancelled:
                message = f"the client did not answer {method}: {_error_text(frame.error)}"
                call.channel.reply(rpc.error_frame(call.request_id, INTERNAL_ERROR, message))
            return
        try:
            call.input_responses[key] = input_response(method, frame.result)
        except msgspec.ValidationError as exc:
            message = f"bad {method} result: {exc}"
            call.channel.reply(rpc.error_frame(call.request_id, proto.INVALID_PARAMS, message))
            return
        if pending.waiting:
            return
        call.state = pending.state
        # Resume on the next turn of the loop, so that the transport acknowledges this
        # answer (HTTP: its 202) before the request it completes sends its reply.
        channel.spawn(self._resume(pending))

    async def _resume(self, pending: _Round) -> None:
        await settle(pending.rerun(), pending.call.channel)

    def cancel(self, request_id: RequestId) -> None:
        """The client cancelled a request: stop waiting for its answers."""
        for oid, pending in list(self.outbound.items()):
            if pending.call.request_id == request_id:
                pending.call.cancelled = True
                self.outbound.pop(oid, None)

    def close(self) -> None:
        self.outbound.clear()
        for waiting in self.awaited.values():
            waiting.future.cancel()
        self.awaited.clear()


def _cancel(call: Call, oid: int, reason: str) -> None:
    """Tell the client to stop working on request `oid` (best effort: its stream)."""
    params = t.CancelledNotificationParams(request_id=oid, reason=reason)
    call.channel.notify(_encode(t.CancelledNotification(params=params)))


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return repr(error)
