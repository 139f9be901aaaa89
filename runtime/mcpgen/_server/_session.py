"""One connection's protocol state machine: a frame in, one `Outcome` out.

`Session.receive(frame, channel)` never raises: a bug in the core becomes a -32603
reply (logged here, with no detail for the peer). What the outcome means and how a
transport carries it out (`deliver`) is in `mcpgen._server._call`. Notifications tied
to a request go through `channel.notify` before its reply; work started by a
response frame (a legacy answer completing a request) is handed to `channel.spawn`.
Each frame is classified on its own (modern `_meta`, legacy session, or neither), so
one connection can carry both eras. A legacy session holds a `LegacyBridge` for its
handlers' input requests.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from types import CoroutineType
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._authorize import refusal
from mcpgen._server._awaits import InputPending
from mcpgen._server._batch import receive_batch
from mcpgen._server._bridge import LegacyBridge
from mcpgen._server._bus import RESOURCE, ChangeEvent, Listener, uri_covers
from mcpgen._server._call import (
    DEFERRED,
    Call,
    Channel,
    Deferred,
    Outcome,
    Pending,
    RequestId,
)
from mcpgen._server._context import InputRequired
from mcpgen._server._core import ServerCore
from mcpgen._server._legacy import LegacyState, client_methods
from mcpgen._server._masking import UNAVAILABLE, report
from mcpgen._server._methods import MethodSpec, check_headers, initialize_result
from mcpgen._server._mrtr import awaited_round, input_required, open_retry
from mcpgen.stores import SessionState, StoreUnavailableError
from mcpgen_types.latest import INTERNAL_ERROR

__all__ = ["Session"]

log = logging.getLogger("mcpgen.server")
# What the peer learns of a bug in the core: no detail (the log has the traceback).
INTERNAL: Final = rpc.error_frame(None, INTERNAL_ERROR, "internal error")
_BAD: Final = proto.STATUS_BAD_REQUEST


_encode = msgspec.json.Encoder().encode


class _MetaProbe(msgspec.Struct, gc=False):
    meta: object = msgspec.field(default=None, name="_meta")


_probe = msgspec.json.Decoder(_MetaProbe)


class Session:
    """The protocol state of one connection (modern requests need none; a legacy
    `initialize` handshake creates some). Transports see it as a `SessionPort`."""

    def __init__(self, core: ServerCore, channel: Channel | None = None) -> None:
        self.core = core
        self.channel = channel  # session-level frames (legacy list_changed ...)
        self.legacy: LegacyState | None = None
        self.bridge: LegacyBridge | None = None  # with `legacy`
        self.inflight: dict[RequestId, Call] = {}
        self.listens: dict[RequestId, int] = {}

    @property
    def legacy_version(self) -> str | None:
        """The revision an `initialize` handshake negotiated, or None (no handshake)."""
        return None if self.legacy is None else self.legacy.version

    def attach(self, channel: Channel) -> None:
        """Send session-level frames (legacy notifications and requests not tied to a
        request) to `channel` from now on."""
        self.channel = channel

    def to_state(self, session_id: str, principal: str | None) -> SessionState | None:
        """The legacy state as a `SessionStore` keeps it (None: no handshake)."""
        if (legacy := self.legacy) is None:
            return None
        subscriptions = sorted(legacy.subscriptions)
        return SessionState(
            id=session_id, version=legacy.version, client_capabilities=legacy.caps,
            client_info=legacy.info, initialized=legacy.initialized, log_rank=legacy.log_rank,
            subscriptions=subscriptions, principal=principal,
        )  # fmt: skip

    def from_state(self, state: SessionState) -> None:
        """Continue the legacy session `state` describes (another worker's, maybe)."""
        info = state.client_info or {}
        legacy = self.legacy = LegacyState(state.version, state.client_capabilities, info)
        legacy.initialized, legacy.log_rank = state.initialized, state.log_rank
        legacy.subscriptions = set(state.subscriptions)
        if self.bridge is None:
            self.bridge = LegacyBridge(state.version, state.client_capabilities, self.core.loop)
        self.core.legacy_sessions.add(self)

    # -- entry point -------------------------------------------------------------------------
    def receive(self, line: bytes | str, channel: Channel) -> Outcome:
        """What becomes of one frame; never raises (see the module docstring)."""
        try:
            got = self.take(line.encode() if isinstance(line, str) else line, channel)
            if not isinstance(got, Call):
                return got
            # Judged on the params the handler gets: one decode, one view (`_authorize`).
            if got.auth is not None and self.core.scoped and (refused := refusal(self.core, got)):
                return refused
            return self._dispatch(got.spec, got, got.params)
        except RecursionError:  # params or batch members nested deeper than decoders go
            return rpc.error_frame(
                UNSET, rpc.PARSE_ERROR, "parse error: nested too deeply", status=_BAD
            )
        except Exception:  # a bug in the core must not end the connection
            log.exception("unexpected error handling a message")
            return INTERNAL

    def run(self, call: Call) -> Outcome:
        """Dispatch a request `take` decoded (and authorization let through)."""
        return self._dispatch(call.spec, call, call.params)

    def take(self, line: bytes, channel: Channel) -> Outcome | Call:
        """A frame's outcome, or the request it holds, decoded and ready to be judged."""
        try:
            frame = rpc.decode_frame(line)
        except msgspec.ValidationError:
            if rpc.is_batch(line):
                return receive_batch(line, self, channel)
            return rpc.error_frame(
                UNSET, rpc.INVALID_REQUEST, "a JSON-RPC message is an object", status=_BAD
            )
        except msgspec.DecodeError as exc:
            return rpc.error_frame(UNSET, rpc.PARSE_ERROR, f"parse error: {exc}", status=_BAD)
        kind = rpc.classify(frame)
        if kind == rpc.REQUEST:
            return self._request(frame, channel)
        if kind == rpc.NOTIFICATION:
            if self.core.chains is not None:  # through the middleware's notification hooks
                return self.core.chains.notification(self, frame, channel)
            self._notification(frame)
            return None
        if kind in (rpc.RESPONSE, rpc.ERROR):
            if self.bridge is not None:
                self.bridge.answer(frame, kind, channel)
            return None
        if frame.id is UNSET and frame.method is not UNSET:
            return None  # a malformed notification: nobody waits for an answer
        return rpc.error_frame(
            rpc.readable_id(frame), rpc.INVALID_REQUEST, _invalid_reason(frame), status=_BAD
        )

    def close(self) -> None:
        """The connection ended: cancel work, drop listeners and legacy state."""
        for call in list(self.inflight.values()):
            call.cancel()
        self.inflight.clear()
        for key in self.listens.values():
            self.core.listeners.pop(key, None)
        self.listens.clear()
        if self.bridge is not None:
            self.bridge.close()
        self.core.legacy_sessions.discard(self)

    # -- requests ----------------------------------------------------------------------------
    def _request(self, frame: rpc.Frame, channel: Channel) -> Outcome | Call:
        method: str = frame.method
        spec = self.core.methods.get(method)
        raw = frame.params
        params: Any = None
        # A modern request is decoded once, straight to its params type. In a legacy
        # session, where `_meta` rarely carries a version, the cheap probe goes first.
        if (
            self.legacy is None
            and spec is not None
            and spec.modern is not None
            and raw is not UNSET
        ):
            try:
                params = spec.modern.decode(raw)
            except msgspec.ValidationError:
                params = None
        if params is not None:
            meta = params.meta
        else:
            try:
                meta = _probe.decode(raw).meta if raw is not UNSET else None
            except msgspec.ValidationError:
                meta = None
        if type(meta) is dict and proto.META_VERSION in meta:
            return self._modern(frame, spec, params, meta, channel)
        if method == "initialize":
            return self._initialize(frame.id, raw)
        if self.legacy is not None or method == "ping":
            return self._legacy(frame, spec, raw, channel)
        return rpc.error_frame(
            frame.id,
            proto.INVALID_PARAMS,
            f"params._meta[{proto.META_VERSION!r}] is required "
            "(or initialize a legacy session first)",
            status=proto.STATUS_BAD_REQUEST,
        )

    def _modern(
        self,
        frame: rpc.Frame,
        spec: MethodSpec | None,
        params: Any,
        meta: dict[str, Any],
        channel: Channel,
    ) -> Outcome | Call:
        method, rid = frame.method, frame.id
        try:
            version, caps, level = proto.validate_meta(meta, channel.headers, method)
            if spec is None or spec.modern is None or not self.core.has_feature(method):
                return rpc.error_frame(
                    rid,
                    proto.METHOD_NOT_FOUND,
                    f"method not found: {method}",
                    status=proto.STATUS_NOT_FOUND,
                )
            if params is None:
                # Decoding again raises the precise validation error for the reply.
                params = spec.modern.decode(frame.params if frame.params is not UNSET else b"{}")
            if channel.headers is not None:
                check_headers(self.core, method, params, channel.headers)
        except proto.MetaError as exc:
            return rpc.error_frame(
                rid, exc.code, exc.message, _data(exc), status=proto.STATUS_BAD_REQUEST
            )
        except msgspec.ValidationError as exc:
            return rpc.error_frame(rid, proto.INVALID_PARAMS, f"invalid params: {exc}")
        call = Call(
            rid,
            method,
            "modern",
            version,
            meta,
            caps,
            channel,
            None if level is None else proto.LOG_LEVELS[level],
        )
        call.spec, call.params = spec, params
        return call

    def _legacy(
        self, frame: rpc.Frame, spec: MethodSpec | None, raw: Any, channel: Channel
    ) -> Outcome | Call:
        method, rid = frame.method, frame.id
        legacy = self.legacy
        version = legacy.version if legacy is not None else proto.LEGACY[-1]
        if method == "ping":
            return rpc.result_frame(rid, proto.legacy_module(version).EmptyResult())
        if (
            spec is None
            or not spec.legacy  # e.g. tasks/get: 2025-11-25 knows one, of another shape
            or method not in client_methods(version)
            or not self.core.has_feature(method)
        ):
            return rpc.error_frame(rid, proto.METHOD_NOT_FOUND, f"method not found: {method}")
        try:
            params = spec.legacy_params(version, raw)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return rpc.error_frame(rid, proto.INVALID_PARAMS, f"invalid params: {exc}")
        meta = getattr(params, "meta", UNSET)
        meta = meta if type(meta) is dict else {}
        assert legacy is not None
        call = Call(rid, method, "legacy", version, meta, legacy.caps, channel, legacy.log_rank)
        call.info, call.asker = legacy.info, self.bridge
        call.spec, call.params = spec, params
        return call

    def _initialize(self, rid: RequestId, raw: Any) -> bytes:
        try:
            params = proto.legacy_module(proto.LEGACY[-1]).InitializeRequestParams
            init = msgspec.json.decode(raw if raw is not UNSET else b"null", type=params)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return rpc.error_frame(rid, proto.INVALID_PARAMS, f"invalid initialize params: {exc}")
        requested = init.protocol_version
        version = requested if requested in proto.LEGACY else proto.LEGACY[-1]
        # `extensions` included: policy gives the legacy revisions' types the key.
        caps: dict[str, Any] = msgspec.to_builtins(init.capabilities)
        self.legacy = LegacyState(version, caps, msgspec.to_builtins(init.client_info))
        self.bridge = LegacyBridge(version, caps, self.core.loop)
        self.core.legacy_sessions.add(self)
        result = initialize_result(self.core, version)
        return rpc.result_frame(rid, result)

    # -- dispatch and completion ---------------------------------------------------------
    def _dispatch(self, spec: MethodSpec, call: Call, params: Any) -> Outcome:
        try:
            if spec.mrtr and call.era == "modern":
                open_retry(self.core, spec, call, params)
            out = spec.handler(self.core, self, call, params)
        except McpError as exc:
            return _error(call, exc)
        except Exception as exc:  # a bug in our method code or a resource/prompt handler
            return self._internal(call, exc)
        if type(out) is CoroutineType:
            self.inflight[call.request_id] = call
            return Pending(call, self._await(spec, call, params, out), out)
        return self._complete(spec, call, params, out)

    async def _await(
        self, spec: MethodSpec, call: Call, params: Any, coro: Coroutine[Any, Any, Any]
    ) -> Outcome:
        try:
            out = await coro
            if call.cancelled:
                return None
            return self._complete(spec, call, params, out)
        except McpError as exc:
            return None if call.cancelled else _error(call, exc)
        except Exception as exc:
            return None if call.cancelled else self._internal(call, exc)
        except InputPending as pending:  # an await with no answer yet ends this round
            return (
                None
                if call.cancelled
                else self._complete(spec, call, params, awaited_round(pending))
            )
        except BaseException:
            if call.cancelled:
                return None  # cancelled: no reply, by the rules of cancellation
            raise
        finally:
            self.inflight.pop(call.request_id, None)

    def _complete(self, spec: MethodSpec, call: Call, params: Any, out: Any) -> Outcome:
        if out is DEFERRED:
            return Deferred.DEFERRED
        try:
            if isinstance(out, InputRequired):
                if call.era == "legacy":
                    return self._ask(spec, call, params, out)
                payload = self.core.stamp(
                    call.method, input_required(self.core, spec, call, params, out)
                )
            else:
                result = out
                if type(result) is msgspec.Raw:
                    payload = result
                else:
                    if call.era == "legacy" and call.method == "tools/call":
                        result = self.core.legacy_call_result(params.name, result)
                    payload = self.core.encode_result(call.method, call.version, call.era, result)
            return rpc.result_frame(call.request_id, payload)
        except McpError as exc:
            return _error(call, exc)
        except Exception as exc:
            return self._internal(call, exc)

    def _ask(self, spec: MethodSpec, call: Call, params: Any, out: InputRequired) -> Outcome:
        # Apart from `_complete`: a closure there would cost every call its cells.
        assert self.bridge is not None  # a legacy call implies a handshake
        return self.bridge.ask(call, out, lambda: self._dispatch(spec, call, params))

    def _internal(self, call: Call, exc: Exception) -> bytes:
        said = report(call.method, exc, self.core.mask_errors)
        if isinstance(exc, StoreUnavailableError):  # Redis is down: 503, say no more
            return rpc.error_frame(call.request_id, INTERNAL_ERROR, UNAVAILABLE + said, status=503)
        return rpc.error_frame(call.request_id, INTERNAL_ERROR, "internal error" + said)

    # -- notifications -----------------------------------------------------------------------
    def _notification(self, frame: rpc.Frame) -> None:
        method = frame.method
        if method == "notifications/cancelled":
            try:
                params = (
                    msgspec.json.decode(frame.params, type=dict[str, Any])
                    if frame.params is not UNSET
                    else {}
                )
            except (msgspec.ValidationError, msgspec.DecodeError):
                return
            self.cancel(params.get("requestId"))
        elif method == "notifications/initialized" and self.legacy is not None:
            self.legacy.initialized = True

    def cancel(self, request_id: object) -> None:
        """Cancel an in-flight request or a listen stream (unknown ids are ignored)."""
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return  # not a valid request id (bool is an int in Python)
        call = self.inflight.pop(request_id, None)
        if call is not None:
            call.cancel()
        key = self.listens.pop(request_id, None)
        if key is not None:
            self.core.listeners.pop(key, None)
        if self.bridge is not None:
            self.bridge.cancel(request_id)

    # -- legacy change notifications -----------------------------------------------------------
    def deliver(self, event: ChangeEvent, frame: bytes) -> None:
        """Send a list-changed or resource-updated notification on this legacy session's
        channel (a resource update only when the session subscribed to that URI)."""
        legacy, channel = self.legacy, self.channel
        if legacy is None or not legacy.initialized or channel is None:
            return
        if event.kind == RESOURCE and not any(
            uri_covers(u, event.uri or "") for u in legacy.subscriptions
        ):
            return
        channel.notify(frame)

    def register_listen(self, listener: Listener) -> None:
        """Register a listen stream opened by this session with the core."""
        key = id(listener)
        self.core.listeners[key] = listener
        self.listens[listener.request_id] = key
        if self.core.closing:
            self.core.end_listen(key)


def _error(call: Call, exc: McpError) -> bytes:
    status = proto.STATUS_BAD_REQUEST if isinstance(exc, proto.MetaError) else 200
    return rpc.error_frame(call.request_id, exc.code, exc.message, _data(exc), status=status)


def _data(exc: McpError) -> Any:
    return UNSET if exc.data is None else exc.data  # never `"data": null`


def _invalid_reason(frame: rpc.Frame) -> str:
    if frame.jsonrpc != "2.0":
        return 'invalid request: "jsonrpc" must be "2.0"'
    if frame.method is not UNSET and type(frame.method) is not str:
        return "invalid request: method must be a string"
    if frame.params is not UNSET and frame.method is not UNSET:
        return "invalid request: params must be an object"
    if frame.id is not UNSET:
        return "invalid request: id must be a string or an integer"
    return "invalid request"
