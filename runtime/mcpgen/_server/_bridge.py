"""Legacy sessions: a handler's input requests become real server-to-client requests.

The same MRTR-style handler serves both eras. In a legacy session each input
request goes out as a JSON-RPC request in the session's revision; the client's
answers (inbound response frames) are typed like modern input responses, and once a
round is complete the handler runs again with them, until it returns a result.
"""

from __future__ import annotations

from types import CoroutineType
from typing import TYPE_CHECKING, Any, Final

import msgspec

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._call import DEFERRED, Call, Channel, Pending
from mcpgen._server._context import InputRequired
from mcpgen._server._methods import MethodSpec
from mcpgen._server._mrtr import input_request_method, input_response, legacy_input_request

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore

__all__ = ["Bridge", "BridgeMixin"]

MAX_ROUNDS: Final = 16
_encode = msgspec.json.Encoder().encode


class Bridge:
    """A legacy request whose handler asked for input: real requests are out."""

    __slots__ = ("call", "params", "round", "spec", "state", "waiting")

    def __init__(self, spec: MethodSpec, call: Call, params: Any) -> None:
        self.spec, self.call, self.params = spec, call, params
        self.waiting: dict[int, tuple[str, str]] = {}  # outbound id -> (key, method)
        self.state: Any = None
        self.round = 0


class BridgeMixin:
    """The legacy half of `Session` (see its docstring for the outcome protocol)."""

    core: ServerCore
    legacy: Any
    outbound: dict[int, Bridge]
    _next_id: int

    def _complete(self, spec: MethodSpec, call: Call, params: Any, out: Any) -> Any:
        raise NotImplementedError

    def _internal(self, call: Call, exc: Exception) -> bytes:
        raise NotImplementedError

    def bridge_start(self, spec: MethodSpec, call: Call, params: Any, out: InputRequired) -> Any:
        bridge = Bridge(spec, call, params)
        return self._bridge_round(bridge, out)

    def _bridge_round(self, bridge: Bridge, out: InputRequired) -> Any:
        call = bridge.call
        bridge.round += 1
        if bridge.round > MAX_ROUNDS:
            return rpc.error_frame(call.request_id, -32603, "too many input rounds")
        bridge.state = out.state
        assert self.legacy is not None
        frames = []
        for key, request in out.requests.items():
            method = input_request_method(request)
            frame = legacy_input_request(self.legacy.version, self.legacy.caps, request)
            self._next_id += 1
            oid = self._next_id
            bridge.waiting[oid] = (key, method)
            self.outbound[oid] = bridge
            frames.append(_encode({"jsonrpc": "2.0", "id": oid, **frame}))
        if not frames:  # state only: answer at once with the state
            call.state = out.state
            return self._rerun(bridge)
        for f in frames:
            call.channel.request(f)
        return DEFERRED

    def _response(self, frame: rpc.Frame, kind: int, channel: Channel) -> None:
        bridge = self.outbound.pop(frame.id, None) if type(frame.id) is int else None
        if bridge is None:
            return  # a late or unsolicited response: ignore
        key, method = bridge.waiting.pop(frame.id)
        call = bridge.call
        if kind == rpc.ERROR or call.cancelled:
            for oid in bridge.waiting:
                self.outbound.pop(oid, None)
            if not call.cancelled:
                message = f"the client did not answer {method}: {_error_text(frame.error)}"
                call.channel.reply(rpc.error_frame(call.request_id, -32603, message))
            return
        try:
            call.input_responses[key] = input_response(method, frame.result)
        except msgspec.ValidationError as exc:
            call.channel.reply(
                rpc.error_frame(
                    call.request_id, proto.INVALID_PARAMS, f"bad {method} result: {exc}"
                )
            )
            return
        if bridge.waiting:
            return
        call.state = bridge.state
        # Resume on the next turn of the loop, so that the transport acknowledges this
        # answer (HTTP: its 202) before the request it completes sends its reply.
        channel.spawn(self._resume(bridge))

    def _rerun(self, bridge: Bridge) -> Any:
        try:
            out = bridge.spec.handler(self.core, self, bridge.call, bridge.params)
        except McpError as exc:
            return _error_for(bridge.call, exc)
        except Exception as exc:
            return self._internal(bridge.call, exc)
        if type(out) is CoroutineType:
            return Pending(bridge.call, self._await_bridge(bridge, out), out)
        return self._after_rerun(bridge, out)

    async def _await_bridge(self, bridge: Bridge, coro: Any) -> Any:
        try:
            out = await coro
        except McpError as exc:
            return _error_for(bridge.call, exc)
        except Exception as exc:
            return self._internal(bridge.call, exc)
        return self._after_rerun(bridge, out)

    def _after_rerun(self, bridge: Bridge, out: Any) -> Any:
        if isinstance(out, InputRequired):
            return self._bridge_round(bridge, out)
        return self._complete(bridge.spec, bridge.call, bridge.params, out)

    async def _resume(self, bridge: Bridge) -> None:
        outcome = self._rerun(bridge)
        if isinstance(outcome, Pending):
            outcome = await outcome.coro
        if isinstance(outcome, bytes):
            bridge.call.channel.reply(outcome)


def _error_for(call: Call, exc: McpError) -> bytes:
    return rpc.error_frame(
        call.request_id, exc.code, exc.message, None if exc.data is None else exc.data
    )


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return repr(error)
