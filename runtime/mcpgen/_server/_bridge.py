"""Legacy sessions: a handler's input requests become real server-to-client requests.

The same MRTR-style handler serves both eras. In a legacy session each input request
goes out as a JSON-RPC request in the session's revision; the client's answers
(inbound response frames) are typed like modern input responses, and once a round is
complete the handler runs again with them, until it returns a result.

A `Session` holds one `LegacyBridge` per `initialize` handshake. The bridge knows the
session's revision and the client's capabilities, and nothing else of it: to run a
handler again it calls the continuation the session gave it with the round.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._server._call import DEFERRED, Call, Channel, Outcome, RequestId, settle
from mcpgen._server._context import InputRequired
from mcpgen._server._mrtr import input_request_method, input_response, legacy_input_request
from mcpgen_types import latest as t
from mcpgen_types.latest import INTERNAL_ERROR

__all__ = ["MAX_ROUNDS", "LegacyBridge"]

MAX_ROUNDS: Final = 16
_encode = msgspec.json.Encoder().encode

# Runs the handler of a call again (with `call.input_responses` and `call.state` set)
# and returns what the session's dispatch makes of it.
Rerun = Callable[[], Outcome]


class _Round:
    """One round of a legacy request whose handler asked for input: requests are out."""

    __slots__ = ("call", "rerun", "state", "waiting")

    def __init__(self, call: Call, rerun: Rerun, state: Any) -> None:
        self.call, self.rerun, self.state = call, rerun, state
        self.waiting: dict[int, tuple[str, str]] = {}  # outbound id -> (key, method)


class LegacyBridge:
    """Input requests of one legacy session, sent as real requests and answered."""

    __slots__ = ("_next_id", "caps", "outbound", "version")

    def __init__(self, version: str, caps: dict[str, Any]) -> None:
        self.version = version
        self.caps = caps  # the client's, as it declared them in `initialize`
        self.outbound: dict[int, _Round] = {}
        self._next_id = 0

    def ask(self, call: Call, out: InputRequired, rerun: Rerun) -> Outcome:
        """Send `out`'s input requests for `call` (DEFERRED: the reply comes once the
        client has answered them all), or, with state only, run the handler again now."""
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
            call.channel.request(f)
        return DEFERRED

    def answer(self, frame: rpc.Frame, kind: int, channel: Channel) -> None:
        """A response frame from the client (`kind`: RESPONSE or ERROR); late or
        unsolicited ones are ignored."""
        pending = self.outbound.pop(frame.id, None) if type(frame.id) is int else None
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


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('code')}: {error.get('message')}"
    return repr(error)
