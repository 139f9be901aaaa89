"""Client protocol state: one per connection (a stdio process, an HTTP endpoint)."""

from __future__ import annotations

import functools
import itertools
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._client._era import ProbeVerdict
from mcpgen._client._steps import Resend
from mcpgen._client._tasks import (
    TASK_METHODS,
    created_task,
    declaring,
    legacy_support,
    task_notification,
)
from mcpgen._errors import ClientError, McpError, ProtocolViolationError
from mcpgen_types import latest as t

__all__ = ["ClientCore", "Incoming", "ProgressToken", "RequestId", "Sent"]

RequestId = int | str
ProgressToken = str | int
# (id, params as sent, frame) of one outgoing request
Sent = tuple[RequestId, dict[str, Any], bytes]

_encode = msgspec.json.Encoder().encode
_ENCODED: Final = (msgspec.Raw, bytes)
MODERN_ERRORS: Final = frozenset(
    {proto.HEADER_MISMATCH, proto.MISSING_CAPABILITY, proto.UNSUPPORTED_VERSION}
)
# Results that older servers send without the newest revision's required fields.
_LEGACY_DEFAULTS: Final[dict[str, Any]] = {
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "private",
}


@functools.cache
def _decoder(result_type: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(result_type)


class Incoming(msgspec.Struct, frozen=True):
    """One classified inbound message ("invalid": not a JSON-RPC message we accept; its
    `id` is kept when it had a usable one, so a waiting request can be failed)."""

    kind: Literal["response", "error", "notification", "request", "invalid"]
    id: RequestId | None = None
    method: str | None = None
    params: dict[str, Any] | None = None
    result: msgspec.Raw | None = None
    error: dict[str, Any] | None = None


def _too_deep(method: str) -> ProtocolViolationError:
    return ProtocolViolationError(f"{method}: the result is nested too deeply to decode")


class ClientCore:
    def __init__(
        self,
        info: t.Implementation,
        capabilities: dict[str, Any],
        *,
        log_level: str | None = None,
        legacy_capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.info = info
        self.info_meta = msgspec.to_builtins(info)
        self.capabilities = capabilities
        self.legacy_capabilities = (
            legacy_capabilities if legacy_capabilities is not None else capabilities
        )
        self.log_level = log_level
        self.era: Literal["modern", "legacy"] | None = None
        self.version: str = proto.LATEST
        self.server_capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] | None = None
        self.instructions: str | None = None
        # 2025-11-25 sessions: each listed tool's `execution.taskSupport`
        self.task_support: dict[str, str] = {}
        self._ids = itertools.count(1)

    # -- outgoing ---------------------------------------------------------------------------
    def next_id(self) -> int:
        return next(self._ids)

    @functools.cached_property
    def task_capabilities(self) -> dict[str, Any]:
        """The client capabilities of a request declaring the Tasks extension."""
        return declaring(self.capabilities)

    def meta(
        self,
        progress_token: ProgressToken | None = None,
        version: str | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The per-request `_meta` of a modern request (legacy: only a progress token);
        `capabilities` replaces the client's own for this request."""
        if self.era == "legacy":
            return {} if progress_token is None else {proto.META_PROGRESS: progress_token}
        meta: dict[str, Any] = {
            proto.META_VERSION: version or self.version,
            proto.META_CAPABILITIES: self.capabilities if capabilities is None else capabilities,
            proto.META_CLIENT_INFO: self.info_meta,
        }
        if self.log_level is not None:
            meta[proto.META_LOG_LEVEL] = self.log_level
        if progress_token is not None:
            meta[proto.META_PROGRESS] = progress_token
        return meta

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress_token: ProgressToken | None = None,
        version: str | None = None,
        request_id: RequestId | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> Sent:
        """(id, params as sent, frame) of a request in the current era."""
        rid = self.next_id() if request_id is None else request_id
        sent = dict(params or {})
        meta = self.meta(progress_token, version, capabilities)
        if meta:
            sent["_meta"] = {**sent.get("_meta", {}), **meta}
        # A legacy request without params leaves them out (some servers reject `{}`).
        body = sent if (sent or self.era != "legacy") else UNSET
        return rid, sent, _encode(t.JSONRPCRequest(id=rid, method=method, params=body))

    def notification(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        body = UNSET if params is None else params
        return _encode(t.JSONRPCNotification(method=method, params=body))

    def response(self, request_id: RequestId | None, result: Any) -> bytes:
        return rpc.result_frame(request_id, result)

    def error_response(self, request_id: RequestId | None, code: int, message: str) -> bytes:
        return bytes(rpc.error_frame(request_id, code, message))

    def headers(
        self,
        method: str,
        params: dict[str, Any],
        params_headers: dict[str, tuple[str, str]] | None = None,
    ) -> dict[str, str]:
        """Mirrored HTTP headers of a request (2026-07-28 transports page)."""
        if self.era == "legacy":
            return {"mcp-protocol-version": self.version}
        version = params.get("_meta", {}).get(proto.META_VERSION, self.version)
        headers = {"mcp-protocol-version": version, "mcp-method": method}
        field = proto.NAME_PARAM.get(method)
        if field is not None and field in params:
            value = proto.encode_header_value(params[field])
            if value is not None:
                headers["mcp-name"] = value
        if params_headers:
            arguments = params.get("arguments") or {}
            for header, (prop, _) in params_headers.items():
                value = arguments.get(prop)
                if value is not None:
                    encoded = proto.encode_header_value(value)
                    if encoded is not None:
                        headers["mcp-param-" + header] = encoded
        return headers

    # -- incoming ---------------------------------------------------------------------------
    def classify(self, line: bytes | str) -> Incoming:
        try:
            frame = rpc.decode_frame(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return Incoming("invalid")
        kind = rpc.classify(frame)
        if kind == rpc.RESPONSE:
            # classify() saw a result: never UNSET here
            return Incoming("response", id=frame.id, result=frame.result)  # type: ignore[arg-type]
        if kind == rpc.ERROR:
            if type(frame.error) is not dict:
                return Incoming("invalid", id=frame.id)
            return Incoming("error", id=frame.id, error=frame.error)
        try:
            params = msgspec.json.decode(frame.params) if frame.params is not UNSET else None
        except RecursionError:  # the frame's decode just got through: a few levels more here
            return Incoming("invalid")
        if kind == rpc.REQUEST:
            return Incoming("request", id=frame.id, method=frame.method, params=params)
        if kind == rpc.NOTIFICATION:
            return Incoming("notification", method=frame.method, params=params)
        if (
            type(frame.error) is dict and frame.result is UNSET and frame.id in (UNSET, None)
        ):  # an error without an id, or with a null one (HTTP 4xx bodies)
            return Incoming("error", id=None, error=frame.error)
        return Incoming("invalid", id=frame.id if rpc.valid_id(frame.id) else None)

    def raise_error(self, error: dict[str, Any]) -> McpError | ProtocolViolationError:
        """The exception for an error the server sent (a malformed one is a breach)."""
        code = error.get("code")
        if type(code) is not int:
            return ProtocolViolationError(
                f"the server sent an error without an integer code: {error}"
            )
        return McpError(code, str(error.get("message", "")), error.get("data"))

    def resend_after(self, method: str, error: dict[str, Any]) -> Resend | None:
        """Whether a modern request refused with `error` is sent once more
        (`proto.RESEND_ONCE`); a version switch is adopted here. None: it failed."""
        if self.era != "modern":
            return None
        code = error.get("code")
        rule = proto.RESEND_ONCE.get(code) if type(code) is int else None
        if rule is None or (rule[0] is not None and method not in rule[0]):
            return None
        if rule[1] == "switch_version":
            version = proto.common_modern((error.get("data") or {}).get("supported"))
            if version is None:
                return None
            self.version = version
            return Resend()
        return Resend(refresh_tools=True)

    def result(self, method: str, raw: Any, *, tasks: bool = False) -> msgspec.Struct:
        """A result typed by the newest revision: the method's result, or an
        InputRequiredResult when the server asks for input, or (`tasks`: the request
        declared the Tasks extension) a CreateTaskResult when the server made it a task."""
        info = t.METHODS.get(method)
        encoded = isinstance(raw, _ENCODED)
        if encoded and info is not None and not info.cacheable:
            # The common case in one pass: a complete result decoded straight to its type
            # (anything else, or a mismatch, takes the checked path below).
            try:
                typed = _decoder(info.result).decode(raw)
            except msgspec.ValidationError:
                pass
            except RecursionError:
                raise _too_deep(method) from None
            else:
                if getattr(typed, "result_type", "complete") == "complete":
                    return typed  # type: ignore[no-any-return]
        try:
            data = msgspec.json.decode(raw) if encoded else raw
        except RecursionError:
            raise _too_deep(method) from None
        if not isinstance(data, dict):
            raise ProtocolViolationError(f"{method}: the result is not an object")
        kind = data.get("resultType", "complete")
        if method == "tools/list" and self.era == "legacy":
            self.task_support.update(legacy_support(data))
        if kind == "input_required":
            if info is None or not info.input_required:
                raise ProtocolViolationError(
                    f"{method}: the server asked for input where it may not"
                )
            return msgspec.convert(data, t.InputRequiredResult)
        if kind == "task":
            if not tasks or method not in TASK_METHODS:
                raise ProtocolViolationError(
                    f"{method}: a task result to a request that did not declare tasks"
                )
            return created_task(data)
        if kind != "complete":
            raise ProtocolViolationError(f"{method}: unknown resultType {kind!r}")
        result_type = info.result if info is not None else t.Result
        if info is not None and info.cacheable:
            for key, value in _LEGACY_DEFAULTS.items():
                data.setdefault(key, value)
        try:
            typed_result: msgspec.Struct = msgspec.convert(data, result_type)
        except msgspec.ValidationError as exc:
            raise ProtocolViolationError(
                f"{method}: the server's result does not match the schema: {exc}"
            ) from None
        return typed_result

    def notification_of(self, incoming: Incoming) -> msgspec.Struct | dict[str, Any]:
        """A server notification typed by the newest revision, or the raw message."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": incoming.method}
        if incoming.params is not None:
            message["params"] = incoming.params
        try:
            typed: msgspec.Struct = msgspec.convert(message, t.ServerNotification)
            return typed
        except msgspec.ValidationError:
            if incoming.method == "notifications/tasks":
                return task_notification(message) or message
            return message

    # -- era selection ------------------------------------------------------------------------
    def probe_verdict(
        self,
        *,
        result: msgspec.Raw | None = None,
        error: dict[str, Any] | None = None,
        http_status: int | None = None,
    ) -> ProbeVerdict:
        """What a `server/discover` probe's answer says about the server's era.

        A DiscoverResult or a recognized modern error means a modern server (an
        unsupported version is retried with one both sides support); anything else, a
        legacy one. The fallback is not keyed to one error code (lifecycle page).
        """
        if result is not None:
            discovered = self.result("server/discover", result)
            assert isinstance(discovered, t.DiscoverResult)
            self.on_discover(discovered)
            return ProbeVerdict("modern", self.version)
        code = None if error is None else error.get("code")
        if error is not None and code in MODERN_ERRORS:
            if code == proto.UNSUPPORTED_VERSION:
                supported = (error.get("data") or {}).get("supported") or []
                ours = proto.common_modern(supported)
                if ours is not None:
                    return ProbeVerdict("retry", ours)
                if any(v in proto.LEGACY for v in supported):
                    return ProbeVerdict("legacy")
                raise self.raise_error(error)  # a modern server with no version in common
            return ProbeVerdict("modern", self.version)
        if code == proto.METHOD_NOT_FOUND and http_status == proto.STATUS_NOT_FOUND:
            return ProbeVerdict("modern", self.version)  # a modern server without discover
        return ProbeVerdict("legacy")

    def on_discover(self, result: t.DiscoverResult) -> None:
        ours = proto.common_modern(result.supported_versions)
        if ours is None:
            raise ClientError(f"no modern version in common: {result.supported_versions}")
        self.era, self.version = "modern", ours
        self.server_capabilities = msgspec.to_builtins(result.capabilities)
        meta = result.meta if result.meta is not UNSET else {}
        self.server_info = meta.get(proto.META_SERVER_INFO)
        self.instructions = None if result.instructions is UNSET else result.instructions

    def initialize(self, version: str | None = None) -> tuple[RequestId, bytes]:
        """The legacy handshake's request (the era becomes legacy when it succeeds)."""
        rid = self.next_id()
        params = {
            "protocolVersion": version or proto.LEGACY[-1],
            "capabilities": self.legacy_capabilities,  # as given: extensions included
            "clientInfo": self.info_meta,
        }
        return rid, _encode(t.JSONRPCRequest(id=rid, method="initialize", params=params))

    def on_initialize(self, raw: msgspec.Raw | bytes | dict[str, Any] | None) -> bytes:
        """Record the InitializeResult; returns the `notifications/initialized` frame."""
        data = msgspec.json.decode(raw) if isinstance(raw, msgspec.Raw | bytes) else raw
        version = data.get("protocolVersion") if isinstance(data, dict) else None
        if not isinstance(data, dict) or version not in proto.LEGACY:
            raise ProtocolViolationError(
                f"the server answered initialize with unsupported version {version!r}"
            )
        self.era, self.version = "legacy", str(version)
        self.server_capabilities = data.get("capabilities") or {}
        self.server_info = data.get("serverInfo")
        self.instructions = data.get("instructions")
        return self.notification("notifications/initialized")

    def adopt_modern(self, version: str | None = None) -> None:
        """Pinned modern era: no probe, no handshake."""
        self.era, self.version = "modern", version or proto.LATEST
