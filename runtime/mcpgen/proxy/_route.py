"""Continuations carried to the proxy process that holds their upstream call.

A modern client's rounds are stateless requests that may reach any worker, while the
upstream call they continue (an open request on a legacy upstream's session) lives in
the process that started it. With a shared bus (`Proxy(..., redis=...)`), a worker
that receives a continuation for a call it does not hold publishes the client's
answers addressed to the call; the owner acknowledges at once, continues the call as
for a local round, and publishes the outcome (the upstream's result, its next input
requests, or an error) back to the asking worker, which answers its client with it.
No acknowledgement within `ACK_SECONDS`: no process holds the call, and the round
fails as without a bus. Progress and log messages of such a round are dropped.

Both directions ride on `ReplyEvent` (the bus's event set is closed), addressed
`proxy-call/<call id>` and `proxy-answer/<nonce>`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import msgspec

from mcpgen._errors import McpError
from mcpgen._server._context import InputRequired
from mcpgen.proxy._input import GONE, PENDING, InputBridge
from mcpgen.stores import Bus, BusEvent, ReplyEvent
from mcpgen_types import latest as t

__all__ = ["ACK_SECONDS", "Router"]

log = logging.getLogger("mcpgen.proxy")

ACK_SECONDS: Final = 2.0
_CALL: Final = "proxy-call/"
_ANSWER: Final = "proxy-answer/"

Typed = tuple[str, Any]  # a type of mcpgen_types.latest by name, and the value as JSON


class _Continue(msgspec.Struct):
    call: str
    reply: str
    responses: dict[str, Any]


class _Outcome(msgspec.Struct, omit_defaults=True):
    ack: bool = False
    result: Typed | None = None
    requests: dict[str, Typed] | None = None
    error: tuple[int, str] | None = None


_encode = msgspec.json.encode
_decode_continue = msgspec.json.Decoder(_Continue).decode
_decode_outcome = msgspec.json.Decoder(_Outcome).decode


def _typed(value: Any) -> Typed:
    return type(value).__name__, msgspec.to_builtins(value)


def _untyped(typed: Typed) -> Any:
    name, raw = typed
    kind = getattr(t, name, None)
    if not isinstance(kind, type) or not issubclass(kind, msgspec.Struct):
        raise McpError(t.INTERNAL_ERROR, f"the owning proxy process sent an unknown {name!r}")
    return msgspec.convert(raw, kind)


class Router:
    """Subscribes to `bus`; answers continuations for the calls of `bridges` and sends
    those of calls held elsewhere (`remote`, each bridge's `remote`)."""

    def __init__(self, bus: Bus, bridges: Callable[[], Iterable[InputBridge]]) -> None:
        self.bus = bus
        self.bridges = bridges
        self._waiting: dict[str, asyncio.Queue[_Outcome]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._unsubscribe = bus.subscribe(self._on_event)

    async def remote(self, call_id: str, responses: Mapping[str, Any]) -> Any:
        """The outcome of continuing `call_id`, held by another process, with `responses`."""
        nonce = secrets.token_urlsafe(16)
        queue = self._waiting[nonce] = asyncio.Queue()
        try:
            ask = _Continue(call_id, _ANSWER + nonce, dict(responses))
            self.bus.publish(ReplyEvent(_CALL + call_id, _encode(ask)))
            try:
                await asyncio.wait_for(queue.get(), ACK_SECONDS)
            except TimeoutError:
                raise McpError(t.INVALID_PARAMS, GONE) from None
            outcome = await queue.get()  # bounded by the owner's own timeouts
        finally:
            del self._waiting[nonce]
        if outcome.error is not None:
            raise McpError(*outcome.error)
        if outcome.requests is not None:
            requests = {key: _untyped(x) for key, x in outcome.requests.items()}
            return InputRequired(requests, state={PENDING: call_id})
        if outcome.result is None:
            raise McpError(t.INTERNAL_ERROR, "the owning proxy process sent no outcome")
        return _untyped(outcome.result)

    def _on_event(self, event: BusEvent) -> None:
        if type(event) is not ReplyEvent:
            return
        address = event.session_id
        if address.startswith(_ANSWER):
            queue = self._waiting.get(address[len(_ANSWER) :])
            if queue is not None:
                queue.put_nowait(_decode_outcome(event.frame))
        elif address.startswith(_CALL):
            call_id = address[len(_CALL) :]
            for bridge in self.bridges():
                if call_id in bridge.calls:  # ours: the asker's own event finds none
                    ask = _decode_continue(event.frame)
                    self.bus.publish(ReplyEvent(ask.reply, _encode(_Outcome(ack=True))))
                    task = asyncio.ensure_future(self._serve(bridge, ask))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                    return

    async def _serve(self, bridge: InputBridge, ask: _Continue) -> None:
        try:
            value = await bridge.resume(ask.call, ask.responses)
            if isinstance(value, InputRequired):
                requests = {key: _typed(x) for key, x in value.requests.items()}
                outcome = _Outcome(requests=requests)
            else:
                outcome = _Outcome(result=_typed(value))
        except McpError as exc:
            outcome = _Outcome(error=(exc.code, exc.message))
        except Exception:
            log.exception("continuing upstream call %s for another process", ask.call)
            outcome = _Outcome(error=(t.INTERNAL_ERROR, "the upstream call failed"))
        self.bus.publish(ReplyEvent(ask.reply, _encode(outcome)))

    def close(self) -> None:
        self._unsubscribe()
        for task in self._tasks:
            task.cancel()
