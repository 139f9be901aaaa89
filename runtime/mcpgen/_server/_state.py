"""Sealed tokens: MRTR `requestState` and pagination cursors.

`requestState` round-trips through the client, so it is attacker-controlled input.
The library seals it: HMAC-SHA256 over a compact body that binds the handler's state
to an expiry, the method, a digest of the salient params and the principal. A key
ring allows rotation (seal with the first key, open with any); a shared key lets many
workers open each other's tokens. Tokens are signed, not encrypted: keep secrets out
of handler state. Cursors use the same keys with a short tag.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import msgspec

from mcpgen._errors import ConfigurationError, McpError

__all__ = ["Sealer", "params_digest", "random_token"]

INVALID_PARAMS = -32602
_canonical = msgspec.json.Encoder(order="sorted")
_PREFIX = "s1"


# hashlib and hmac are imported on first use: a server that never seals anything (no
# MRTR, one page of each list) never loads them.
def _sha256(data: bytes) -> bytes:
    import hashlib  # noqa: PLC0415

    return hashlib.sha256(data).digest()


def _mac(key: bytes, body: bytes) -> bytes:
    import hashlib  # noqa: PLC0415
    import hmac  # noqa: PLC0415

    return hmac.new(key, body, hashlib.sha256).digest()


def _same(a: bytes, b: bytes) -> bool:
    import hmac  # noqa: PLC0415

    return hmac.compare_digest(a, b)


def random_token(nbytes: int) -> str:
    """An unguessable URL-safe token (what `secrets.token_urlsafe` makes, without
    importing `secrets`, which loads OpenSSL through `hmac`)."""
    return _b64(os.urandom(nbytes))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def params_digest(method: str, *salient: Any) -> str:
    """A stable digest of the params a retry must repeat (key order does not matter)."""
    return _b64(_sha256(_canonical.encode([method, *salient]))[:18])


class _Body(msgspec.Struct, array_like=True, gc=False):
    expires: int
    method: str
    digest: str
    principal: str | None
    state: Any


_body_decoder = msgspec.json.Decoder(_Body)


class Sealer:
    def __init__(
        self,
        keys: Sequence[bytes | str] | None = None,
        *,
        ttl_seconds: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        raw = [k.encode() if isinstance(k, str) else k for k in (keys or ())]
        if not raw:
            env = os.environ.get("MCPGEN_STATE_KEYS")
            raw = [k.encode() for k in env.split(",") if k] if env else [os.urandom(32)]
        if any(len(k) < 16 for k in raw):
            raise ConfigurationError("state keys must be at least 16 bytes long")
        self._raw = raw
        self.ttl = ttl_seconds
        self.clock = clock

    @cached_property
    def _keys(self) -> dict[str, bytes]:
        """Key id (a digest prefix, so that workers sharing keys agree) -> key."""
        return {_sha256(k).hex()[:8]: k for k in self._raw}

    @cached_property
    def _current(self) -> str:
        return next(iter(self._keys))

    def _tag(self, kid: str, body: bytes) -> bytes:
        return _mac(self._keys[kid], body)

    def seal(self, state: Any, *, method: str, digest: str, principal: str | None) -> str:
        body = msgspec.json.encode(
            _Body(int(self.clock() + self.ttl), method, digest, principal, state)
        )
        kid = self._current
        return f"{_PREFIX}.{kid}.{_b64(body)}.{_b64(self._tag(kid, body))}"

    def open(self, token: str, *, method: str, digest: str, principal: str | None) -> Any:
        """The sealed state, or McpError(-32602) if tampered, expired or misdirected."""
        try:
            prefix, kid, body_text, tag_text = token.split(".")
            body, tag = _unb64(body_text), _unb64(tag_text)
        except (ValueError, binascii.Error):
            raise _invalid("requestState is malformed") from None
        if prefix != _PREFIX or kid not in self._keys:
            raise _invalid("requestState was not issued by this server")
        if not _same(tag, self._tag(kid, body)):
            raise _invalid("requestState failed its integrity check")
        try:
            sealed = _body_decoder.decode(body)
        except msgspec.DecodeError:
            raise _invalid("requestState is malformed") from None
        if sealed.expires < self.clock():
            raise _invalid("requestState has expired; start the request again")
        if sealed.method != method or sealed.digest != digest:
            raise _invalid("requestState belongs to a different request")
        if sealed.principal != principal:
            raise _invalid("requestState belongs to a different principal")
        return sealed.state

    # -- cursors ---------------------------------------------------------------------------
    def cursor(self, scope: str, offset: int) -> str:
        body = f"{scope}:{offset}".encode()
        return f"{_b64(body)}.{_b64(self._tag(self._current, body)[:12])}"

    def open_cursor(self, scope: str, cursor: str) -> int:
        try:
            body_text, tag_text = cursor.split(".")
            body, tag = _unb64(body_text), _unb64(tag_text)
            found_scope, offset_text = body.decode().rsplit(":", 1)
            offset = int(offset_text)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise _invalid("invalid cursor") from None
        valid = any(_same(tag, self._tag(kid, body)[:12]) for kid in self._keys)
        if not valid or found_scope != scope or offset < 0:
            raise _invalid("invalid cursor")
        return offset


def _invalid(message: str) -> McpError:
    return McpError(INVALID_PARAMS, message)
