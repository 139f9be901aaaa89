"""The one piece of JOSE read before any library is involved: the header of a compact
JWS, which says how (and whether) the rest may be verified. Shared by the JWT verifier
and the DPoP proof check; needs nothing optional."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import msgspec

__all__ = ["compact_header"]

_decode_object = msgspec.json.Decoder(dict[str, Any]).decode


def compact_header(token: str) -> dict[str, Any] | None:
    """The JOSE header of a compact JWS (three dot-separated parts), or None when it is
    not one."""
    if token.count(".") != 2:
        return None
    head = token.split(".", 1)[0]
    try:
        return _decode_object(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError, msgspec.DecodeError):
        return None
