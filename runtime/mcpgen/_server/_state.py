"""Sealed tokens: MRTR `requestState` and pagination cursors.

`requestState` round-trips through the client, so it is attacker-controlled input.
The library seals it: HMAC-SHA256 over a compact body that binds the handler's state
to an expiry, the method, a digest of the salient params and the principal. Tokens are
signed, not encrypted: keep secrets out of handler state. Cursors use the same keys
with a short tag.

The keys come from a `KeyRing` (mcpgen.stores): the newest seals, older ones still
open (rotation). Every token carries the id of the key that sealed it, so opening is
one HMAC. Workers behind one endpoint must share the ring's keys, because a client's
retry may reach any of them: `InMemoryKeyRing.from_env()` reads the comma-separated
`MCPGEN_STATE_KEYS` that every worker's environment carries, and a ring of your own
can read them from a secret store instead.
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from mcpgen._errors import McpError
from mcpgen._protocol import INVALID_PARAMS
from mcpgen.stores import InMemoryKeyRing, KeyRing

__all__ = ["Sealer", "params_digest", "random_token"]

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
    """Seals and opens tokens with the keys of `keys`: a `KeyRing`, a list of secrets
    (newest first), or None for `InMemoryKeyRing.from_env()`."""

    def __init__(
        self,
        keys: KeyRing | Sequence[bytes | str] | None = None,
        *,
        ttl_seconds: float = 900.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if keys is None or (isinstance(keys, Sequence) and not keys):
            self.keys: KeyRing = InMemoryKeyRing.from_env()
        elif isinstance(keys, Sequence):
            self.keys = InMemoryKeyRing(keys)
        else:
            self.keys = keys
        self.ttl = ttl_seconds
        self.clock = clock

    def seal(self, state: Any, *, method: str, digest: str, principal: str | None) -> str:
        body = msgspec.json.encode(
            _Body(int(self.clock() + self.ttl), method, digest, principal, state)
        )
        kid, key = self.keys.sealing_key()
        return f"{_PREFIX}.{kid}.{_b64(body)}.{_b64(_mac(key, body))}"

    def open(self, token: str, *, method: str, digest: str, principal: str | None) -> Any:
        """The sealed state, or McpError(-32602) if tampered, expired or misdirected."""
        try:
            prefix, kid, body_text, tag_text = token.split(".")
            body, tag = _unb64(body_text), _unb64(tag_text)
        except (ValueError, binascii.Error):
            raise _invalid("requestState is malformed") from None
        key = self.keys.opening_key(kid) if prefix == _PREFIX else None
        if key is None:
            raise _invalid("requestState was not issued by this server")
        if not _same(tag, _mac(key, body)):
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
        """`<key id>.<scope:offset>.<truncated tag>`: the key id picks the one key to check."""
        body = f"{scope}:{offset}".encode()
        kid, key = self.keys.sealing_key()
        return f"{kid}.{_b64(body)}.{_b64(_mac(key, body)[:12])}"

    def open_cursor(self, scope: str, cursor: str) -> int:
        try:
            kid, body_text, tag_text = cursor.split(".")
            body, tag = _unb64(body_text), _unb64(tag_text)
            found_scope, offset_text = body.decode().rsplit(":", 1)
            offset = int(offset_text)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise _invalid("invalid cursor") from None
        key = self.keys.opening_key(kid)
        if key is None or not _same(tag, _mac(key, body)[:12]):
            raise _invalid("invalid cursor")
        if found_scope != scope or offset < 0:
            raise _invalid("invalid cursor")
        return offset


def _invalid(message: str) -> McpError:
    return McpError(INVALID_PARAMS, message)
