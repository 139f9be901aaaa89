"""The JSON-RPC 2.0 profile MCP uses: classify one frame, check ids, encode one line.

Owns: telling requests, notifications, responses and invalid frames apart; the id
rules (a string or an integer, never null, bool or float); `params` must be an
object; error frames that echo the id when it is readable; compact single-line
encoding. Knows no MCP method and no protocol version.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "ERROR",
    "INVALID",
    "NOTIFICATION",
    "REQUEST",
    "RESPONSE",
    "ErrorFrame",
    "Frame",
    "classify",
    "decode_frame",
    "encode",
    "error_frame",
    "is_batch",
    "readable_id",
    "result_frame",
    "valid_id",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600

REQUEST: Final = 1
NOTIFICATION: Final = 2
RESPONSE: Final = 3
INVALID: Final = 4
ERROR: Final = 5  # a response carrying an error


class Frame(msgspec.Struct, gc=False):
    """One decoded JSON-RPC object. `params`/`result` stay raw until a method decides."""

    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: msgspec.Raw | UnsetType = UNSET
    result: msgspec.Raw | UnsetType = UNSET
    error: Any = UNSET


class _ErrorBody(msgspec.Struct, omit_defaults=True, gc=False):
    code: int
    message: str
    data: Any = UNSET


class _ErrorOut(msgspec.Struct, kw_only=True, gc=False):
    jsonrpc: str = "2.0"
    id: Any = UNSET
    error: _ErrorBody


class _ResultOut(msgspec.Struct, kw_only=True, gc=False):
    jsonrpc: str = "2.0"
    id: Any
    result: Any


_FRAME = msgspec.json.Decoder(Frame)
_encoder = msgspec.json.Encoder()
encode = _encoder.encode


class ErrorFrame(bytes):
    """An encoded error reply that remembers its code and the HTTP status the protocol
    layer chose for it (the transport only copies the status onto the wire)."""

    code: int
    status: int


def decode_frame(line: bytes | str) -> Frame:
    """Decode one object; raises msgspec.DecodeError (not JSON, not UTF-8, or nested
    deeper than the decoder can follow) or ValidationError (JSON, but not an object).
    Every peer's frame on either side comes through here."""
    try:
        frame = _FRAME.decode(line)
    except RecursionError:
        raise msgspec.DecodeError("nested too deeply") from None
    # msgspec checks the strings it decodes, not the ones it skips (unknown members,
    # raw params): the bytes are checked once whole, and an ASCII line needs nothing.
    if not line.isascii() and type(line) is bytes:
        try:
            line.decode()
        except UnicodeDecodeError:
            raise msgspec.DecodeError("not valid UTF-8") from None
    return frame


def is_batch(line: bytes) -> bool:
    return line.lstrip()[:1] == b"["


def valid_id(value: Any) -> bool:
    """MCP request ids are strings or integers (bool is an int in Python: excluded)."""
    kind = type(value)
    return kind is str or kind is int


def classify(frame: Frame) -> int:
    """REQUEST, NOTIFICATION, RESPONSE, ERROR or INVALID (shape only, no method knowledge)."""
    if frame.jsonrpc != "2.0":
        return INVALID
    method = frame.method
    if method is not UNSET:
        if type(method) is not str or frame.result is not UNSET or frame.error is not UNSET:
            return INVALID
        params = frame.params
        if isinstance(params, msgspec.Raw) and not _is_object(params):
            return INVALID
        if frame.id is UNSET:
            return NOTIFICATION
        return REQUEST if valid_id(frame.id) else INVALID
    if not valid_id(frame.id):
        return INVALID
    if frame.result is not UNSET and frame.error is UNSET:
        return RESPONSE
    if frame.error is not UNSET and frame.result is UNSET:
        return ERROR
    return INVALID


def _is_object(raw: msgspec.Raw) -> bool:
    # msgspec starts a Raw at the value's first byte (no leading whitespace).
    view = memoryview(raw)
    return len(view) > 0 and view[0] == 0x7B  # "{"


def readable_id(frame: Frame | None) -> Any:
    """The id to echo in an error reply, or UNSET when it is missing or invalid."""
    if frame is not None and valid_id(frame.id):
        return frame.id
    return UNSET


def error_frame(
    request_id: Any, code: int, message: str, data: Any = UNSET, status: int = 200
) -> ErrorFrame:
    body = _ErrorBody(code=code, message=message, data=data)
    out = ErrorFrame(
        encode(_ErrorOut(error=body, id=request_id if valid_id(request_id) else UNSET))
    )
    out.code = code
    out.status = status
    return out


def result_frame(request_id: Any, result: Any) -> bytes:
    return encode(_ResultOut(id=request_id, result=result))
