"""Client protocol state: one per connection (a stdio process, an HTTP endpoint)."""

from __future__ import annotations

import functools
import itertools
from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._client._tasks import TASK_METHODS, created_task, declaring, task_notification
from mcpgen._errors import McpError
from mcpgen_types import latest as t

__all__ = ["HTTP_STATUS_ONLY", "ClientCore", "Incoming", "ProbeVerdict"]

# The JSON-RPC error code of an error an HTTP link makes up for a request whose HTTP
# response carried no JSON-RPC body (the message tells the status and what came).
HTTP_STATUS_ONLY: Final = 0

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
    """One classified inbound message."""

    kind: Literal["response", "error", "notification", "request", "invalid"]
    id: Any = None
    method: str | None = None
    params: Any = None  # builtins
    result: Any = None  # msgspec.Raw (response)
    error: Any = None  # builtins (error)


class ProbeVerdict(msgspec.Struct, frozen=True):
    era: Literal["modern", "legacy", "retry"]
    version: str | None = None  # modern: the version to use; retry: the one to try


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
        progress_token: Any = None,
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
        progress_token: Any = None,
        version: str | None = None,
        request_id: Any = None,
        capabilities: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any], bytes]:
        """(id, params as sent, frame) of a request in the current era."""
        rid = self.next_id() if request_id is None else request_id
        sent = dict(params or {})
        meta = self.meta(progress_token, version, capabilities)
        if meta:
            sent["_meta"] = {**sent.get("_meta", {}), **meta}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if sent or self.era != "legacy":
            message["params"] = sent
        return rid, sent, _encode(message)

    def notification(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return _encode(message)

    def response(self, request_id: Any, result: Any) -> bytes:
        return rpc.result_frame(request_id, result)

    def error_response(self, request_id: Any, code: int, message: str) -> bytes:
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
            return Incoming("response", id=frame.id, result=frame.result)
        if kind == rpc.ERROR:
            error = (
                frame.error
                if isinstance(frame.error, dict)
                else {"code": -32603, "message": str(frame.error)}
            )
            return Incoming("error", id=frame.id, error=error)
        params = msgspec.json.decode(frame.params) if frame.params is not UNSET else None
        if kind == rpc.REQUEST:
            return Incoming("request", id=frame.id, method=frame.method, params=params)
        if kind == rpc.NOTIFICATION:
            return Incoming("notification", method=frame.method, params=params)
        if (
            frame.error is not UNSET and frame.result is UNSET and frame.id in (UNSET, None)
        ):  # an error without an id, or with a null one (HTTP 4xx bodies)
            error = (
                frame.error
                if isinstance(frame.error, dict)
                else {"code": -32603, "message": str(frame.error)}
            )
            return Incoming("error", id=None, error=error)
        return Incoming("invalid")

    def raise_error(self, error: dict[str, Any]) -> McpError:
        return McpError(
            int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
        )

    def result(self, method: str, raw: Any, *, tasks: bool = False) -> Any:
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
            else:
                if getattr(typed, "result_type", "complete") == "complete":
                    return typed
        data = msgspec.json.decode(raw) if encoded else raw
        if not isinstance(data, dict):
            raise McpError(-32603, f"{method}: the result is not an object")
        kind = data.get("resultType", "complete")
        if kind == "input_required":
            if info is None or not info.input_required:
                raise McpError(-32603, f"{method}: the server asked for input where it may not")
            return msgspec.convert(data, t.InputRequiredResult)
        if kind == "task":
            if not tasks or method not in TASK_METHODS:
                raise McpError(
                    -32603, f"{method}: a task result to a request that did not declare tasks"
                )
            return created_task(data)
        if kind != "complete":
            raise McpError(-32603, f"{method}: unknown resultType {kind!r}")
        result_type = info.result if info is not None else t.Result
        if info is not None and info.cacheable:
            for key, value in _LEGACY_DEFAULTS.items():
                data.setdefault(key, value)
        try:
            return msgspec.convert(data, result_type)
        except msgspec.ValidationError as exc:
            raise McpError(
                -32603, f"{method}: the server's result does not match the schema: {exc}"
            ) from None

    def notification_of(self, incoming: Incoming) -> Any:
        """A server notification typed by the newest revision, or the raw message."""
        message = {"jsonrpc": "2.0", "method": incoming.method}
        if incoming.params is not None:
            message["params"] = incoming.params
        try:
            return msgspec.convert(message, t.ServerNotification)
        except msgspec.ValidationError:
            if incoming.method == "notifications/tasks":
                return task_notification(message) or message
            return message

    # -- era selection ------------------------------------------------------------------------
    @staticmethod
    def initialize_refused(
        error: dict[str, Any] | None, status: int | None, answered: bool
    ) -> bool:
        """Era detection's last step over HTTP: an `initialize` POST refused with
        400/404/405 and no JSON-RPC answer to it (no body, or an error not `answered`
        for that request) found no MCP endpoint; a server of the older HTTP+SSE
        transport may be there."""
        if error is None or status not in (400, 404, 405):
            return False
        return not answered or error.get("code") == HTTP_STATUS_ONLY

    def probe_verdict(
        self,
        *,
        result: Any = None,
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
            self.on_discover(discovered)
            return ProbeVerdict("modern", self.version)
        if error is not None and error.get("code") in MODERN_ERRORS:
            if error.get("code") == proto.UNSUPPORTED_VERSION:
                supported = (error.get("data") or {}).get("supported") or []
                ours = [v for v in proto.MODERN if v in supported]
                if ours:
                    return ProbeVerdict("retry", ours[0])
                if any(v in proto.LEGACY for v in supported):
                    return ProbeVerdict("legacy")
                raise McpError(
                    proto.UNSUPPORTED_VERSION, f"no protocol version in common: {supported}"
                )
            return ProbeVerdict("modern", self.version)
        if error is not None and error.get("code") == proto.METHOD_NOT_FOUND and http_status == 404:
            return ProbeVerdict("modern", self.version)  # a modern server without discover
        return ProbeVerdict("legacy")

    def on_discover(self, result: t.DiscoverResult) -> None:
        ours = [v for v in proto.MODERN if v in result.supported_versions]
        if not ours:
            raise McpError(
                proto.UNSUPPORTED_VERSION,
                f"no modern version in common: {result.supported_versions}",
            )
        self.era, self.version = "modern", ours[0]
        self.server_capabilities = msgspec.to_builtins(result.capabilities)
        meta = result.meta if result.meta is not UNSET else {}
        self.server_info = meta.get(proto.META_SERVER_INFO)
        self.instructions = None if result.instructions is UNSET else result.instructions

    def initialize(self, version: str | None = None) -> tuple[Any, bytes]:
        """The legacy handshake's request (the era becomes legacy when it succeeds)."""
        rid = self.next_id()
        params = {
            "protocolVersion": version or proto.LEGACY[-1],
            "capabilities": self.legacy_capabilities,
            "clientInfo": self.info_meta,
        }
        return rid, _encode({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params})

    def on_initialize(self, raw: Any) -> bytes:
        """Record the InitializeResult; returns the `notifications/initialized` frame."""
        data = msgspec.json.decode(raw) if isinstance(raw, msgspec.Raw | bytes) else raw
        version = data.get("protocolVersion") if isinstance(data, dict) else None
        if version not in proto.LEGACY:
            raise McpError(
                -32602, f"the server answered initialize with unsupported version {version!r}"
            )
        self.era, self.version = "legacy", version
        self.server_capabilities = data.get("capabilities") or {}
        self.server_info = data.get("serverInfo")
        self.instructions = data.get("instructions")
        return self.notification("notifications/initialized")

    def adopt_modern(self, version: str | None = None) -> None:
        """Pinned modern era: no probe, no handshake."""
        self.era, self.version = "modern", version or proto.LATEST
