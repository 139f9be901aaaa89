"""One connection's protocol state machine: a frame in, at most one reply out.

`Session.receive(line, channel)` returns one of:
  bytes     the reply to write now;
  None      nothing to write (notification, response, cancelled request);
  DEFERRED  the request stays open; its reply comes later through `channel.reply`
            (a listen stream, or a legacy request waiting for client answers);
  Pending   async work: the transport runs `pending.coro` as a task, calls
            `pending.bind(task)`, and treats the coroutine's value like the
            three outcomes above.
Notifications tied to a request go through `channel.notify` before its reply. Work
started by a response frame (a legacy answer completing a request) is handed to
`channel.spawn`. Each frame is classified on its own (modern `_meta`, legacy
session, or neither), so one connection can carry both eras.
"""

from __future__ import annotations

import functools
from types import CoroutineType
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._bridge import Bridge, BridgeMixin
from mcpgen._server._bus import RESOURCE, ChangeEvent, uri_covers
from mcpgen._server._call import DEFERRED, Call, Channel, Pending
from mcpgen._server._context import InputRequired
from mcpgen._server._core import ServerCore
from mcpgen._server._methods import METHODS, MethodSpec, check_headers, initialize_result
from mcpgen._server._mrtr import input_required, open_retry
from mcpgen.stores import SessionState

__all__ = ["DEFERRED", "Pending", "Session", "legacy_state", "restore_legacy"]


_encode = msgspec.json.Encoder().encode
_batch = msgspec.json.Decoder(list[msgspec.Raw])


class _MetaProbe(msgspec.Struct, gc=False):
    meta: Any = msgspec.field(default=None, name="_meta")


_probe = msgspec.json.Decoder(_MetaProbe)


@functools.cache
def _client_methods(version: str) -> frozenset[str]:
    """The requests a client may send in the legacy revision `version`."""
    return frozenset(
        method
        for method, info in proto.legacy_methods(version).items()
        if info.direction in ("client_to_server", "both")
    )


class _Legacy:
    """The state an `initialize` handshake creates (legacy era only)."""

    __slots__ = ("caps", "info", "initialized", "log_rank", "subscriptions", "version")

    def __init__(self, version: str, caps: dict[str, Any], info: Any) -> None:
        self.version = version
        self.caps = caps
        self.info = info
        self.initialized = False
        self.log_rank: int = 0  # every level until logging/setLevel says otherwise
        self.subscriptions: set[str] = set()


class Session(BridgeMixin):
    def __init__(self, core: ServerCore, channel: Channel | None = None) -> None:
        self.core = core
        self.channel = channel  # session-level frames (legacy list_changed ...)
        self.legacy: _Legacy | None = None
        self.inflight: dict[Any, Call] = {}
        self.outbound: dict[int, Bridge] = {}
        self.listens: dict[Any, int] = {}
        self._next_id = 0

    # -- entry point -------------------------------------------------------------------------
    def receive(self, line: bytes | str, channel: Channel) -> Any:
        if isinstance(line, str):
            line = line.encode()
        try:
            frame = rpc.decode_frame(line)
        except msgspec.ValidationError:
            if rpc.is_batch(line):
                return self._batch(line, channel)
            return rpc.error_frame(
                UNSET, rpc.INVALID_REQUEST, "a JSON-RPC message is an object", status=400
            )
        except msgspec.DecodeError as exc:
            return rpc.error_frame(UNSET, rpc.PARSE_ERROR, f"parse error: {exc}", status=400)
        kind = rpc.classify(frame)
        if kind == rpc.REQUEST:
            return self._request(frame, channel)
        if kind == rpc.NOTIFICATION:
            self._notification(frame)
            return None
        if kind in (rpc.RESPONSE, rpc.ERROR):
            self._response(frame, kind, channel)
            return None
        if frame.id is UNSET and frame.method is not UNSET:
            return None  # a malformed notification: nobody waits for an answer
        return rpc.error_frame(
            rpc.readable_id(frame), rpc.INVALID_REQUEST, _invalid_reason(frame), status=400
        )

    def close(self) -> None:
        """The connection ended: cancel work, drop listeners and legacy state."""
        for call in list(self.inflight.values()):
            call.cancel()
        self.inflight.clear()
        for key in self.listens.values():
            self.core.listeners.pop(key, None)
        self.listens.clear()
        self.outbound.clear()
        self.core.legacy_sessions.discard(self)

    # -- requests ----------------------------------------------------------------------------
    def _request(self, frame: rpc.Frame, channel: Channel) -> Any:
        method: str = frame.method
        spec = METHODS.get(method)
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
            return self._initialize(frame, raw)
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
    ) -> Any:
        method, rid = frame.method, frame.id
        try:
            version, caps, level = proto.validate_meta(meta, channel.headers, method)
            if spec is None or spec.modern is None or not self.core.has_feature(method):
                return rpc.error_frame(
                    rid, proto.METHOD_NOT_FOUND, f"method not found: {method}", status=404
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
        return self._dispatch(spec, call, params)

    def _legacy(self, frame: rpc.Frame, spec: MethodSpec | None, raw: Any, channel: Channel) -> Any:
        method, rid = frame.method, frame.id
        legacy = self.legacy
        version = legacy.version if legacy is not None else proto.LEGACY[-1]
        if method == "ping":
            return rpc.result_frame(rid, {})
        if (
            spec is None
            or not spec.legacy  # e.g. tasks/get: 2025-11-25 knows one, of another shape
            or method not in _client_methods(version)
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
        call.info = legacy.info
        return self._dispatch(spec, call, params)

    def _initialize(self, frame: rpc.Frame, raw: Any) -> Any:
        try:
            params = proto.legacy_module(proto.LEGACY[-1]).InitializeRequestParams
            init = msgspec.json.decode(raw if raw is not UNSET else b"null", type=params)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return rpc.error_frame(
                frame.id, proto.INVALID_PARAMS, f"invalid initialize params: {exc}"
            )
        requested = init.protocol_version
        version = requested if requested in proto.LEGACY else proto.LEGACY[-1]
        self.legacy = _Legacy(
            version, msgspec.to_builtins(init.capabilities), msgspec.to_builtins(init.client_info)
        )
        self.core.legacy_sessions.add(self)
        result = initialize_result(self.core, version)
        return rpc.result_frame(frame.id, result)

    # -- dispatch and completion ---------------------------------------------------------
    def _dispatch(self, spec: MethodSpec, call: Call, params: Any) -> Any:
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

    async def _await(self, spec: MethodSpec, call: Call, params: Any, coro: Any) -> Any:
        try:
            out = await coro
            if call.cancelled:
                return None
            return self._complete(spec, call, params, out)
        except McpError as exc:
            return None if call.cancelled else _error(call, exc)
        except Exception as exc:
            return None if call.cancelled else self._internal(call, exc)
        except BaseException:
            if call.cancelled:
                return None  # cancelled: no reply, by the rules of cancellation
            raise
        finally:
            self.inflight.pop(call.request_id, None)

    def _complete(self, spec: MethodSpec, call: Call, params: Any, out: Any) -> Any:
        if out is DEFERRED:
            return DEFERRED
        try:
            if isinstance(out, InputRequired):
                if call.era == "legacy":
                    return self.bridge_start(spec, call, params, out)
                payload = self.core.stamp(
                    call.method, input_required(self.core, spec, call, params, out)
                )
            else:
                result = out
                if type(result) is msgspec.Raw:
                    payload = result
                else:
                    payload = self.core.encode_result(call.method, call.version, call.era, result)
            return rpc.result_frame(call.request_id, payload)
        except McpError as exc:
            return _error(call, exc)
        except Exception as exc:
            return self._internal(call, exc)

    def _internal(self, call: Call, exc: Exception) -> bytes:
        message = (
            "internal error"
            if self.core.mask_errors
            else f"internal error: {type(exc).__name__}: {exc}"
        )
        return rpc.error_frame(call.request_id, -32603, message)

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

    def cancel(self, request_id: Any) -> None:
        """Cancel an in-flight request or a listen stream (unknown ids are ignored)."""
        if not rpc.valid_id(request_id):
            return
        call = self.inflight.pop(request_id, None)
        if call is not None:
            call.cancel()
        key = self.listens.pop(request_id, None)
        if key is not None:
            self.core.listeners.pop(key, None)
        for oid, bridge in list(self.outbound.items()):
            if bridge.call.request_id == request_id:
                bridge.call.cancelled = True
                self.outbound.pop(oid, None)

    # -- batches (2025-03-26 only) --------------------------------------------------------
    def _batch(self, line: bytes, channel: Channel) -> Any:
        if self.legacy is None or self.legacy.version != "2025-03-26":
            return rpc.error_frame(
                UNSET,
                rpc.INVALID_REQUEST,
                "JSON-RPC batches are only accepted in a 2025-03-26 session",
                status=400,
            )
        try:
            items = _batch.decode(line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return rpc.error_frame(UNSET, rpc.PARSE_ERROR, f"parse error: {exc}", status=400)
        if not items:
            return rpc.error_frame(UNSET, rpc.INVALID_REQUEST, "empty batch", status=400)
        outcomes = []
        for item in items:
            raw = bytes(item)
            outcomes.append(
                rpc.error_frame(UNSET, rpc.INVALID_REQUEST, "nested batch")
                if rpc.is_batch(raw)
                else self.receive(raw, channel)
            )
        if any(isinstance(o, Pending) for o in outcomes):
            return Pending(None, _gather(outcomes))
        return _join(outcomes)

    # -- legacy change notifications -----------------------------------------------------------
    def deliver(self, event: ChangeEvent, frame: dict[str, Any]) -> None:
        legacy, channel = self.legacy, self.channel
        if legacy is None or not legacy.initialized or channel is None:
            return
        if event.kind == RESOURCE and not any(
            uri_covers(u, event.uri or "") for u in legacy.subscriptions
        ):
            return
        channel.notify(_encode(frame))

    def register_listen(self, listener: Any) -> None:
        key = id(listener)
        self.core.listeners[key] = listener
        self.listens[listener.request_id] = key


def legacy_state(session: Session, session_id: str, principal: str | None) -> SessionState | None:
    """What a store keeps of a legacy session (None before `initialize`)."""
    legacy = session.legacy
    if legacy is None:
        return None
    return SessionState(
        id=session_id,
        version=legacy.version,
        client_capabilities=legacy.caps,
        client_info=legacy.info,
        initialized=legacy.initialized,
        log_rank=legacy.log_rank,
        subscriptions=sorted(legacy.subscriptions),
        principal=principal,
    )


def restore_legacy(session: Session, state: SessionState) -> None:
    """Make a fresh session continue the legacy one `state` describes."""
    legacy = _Legacy(state.version, state.client_capabilities, state.client_info)
    legacy.initialized = state.initialized
    legacy.log_rank = state.log_rank
    legacy.subscriptions = set(state.subscriptions)
    session.legacy = legacy
    session.core.legacy_sessions.add(session)


async def _gather(outcomes: list[Any]) -> Any:
    done = []
    for o in outcomes:
        done.append(await o.coro if isinstance(o, Pending) else o)
    return _join(done)


def _join(outcomes: list[Any]) -> bytes | None:
    frames = [bytes(o) for o in outcomes if isinstance(o, bytes)]
    return b"[" + b",".join(frames) + b"]" if frames else None


def _error(call: Call, exc: McpError) -> bytes:
    status = proto.STATUS_BAD_REQUEST if isinstance(exc, proto.MetaError) else 200
    return rpc.error_frame(call.request_id, exc.code, exc.message, _data(exc), status=status)


def _data(exc: McpError) -> Any:
    return UNSET if exc.data is None else exc.data


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
