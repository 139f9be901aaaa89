"""The JOSE part of checking a DPoP proof (joserfc, the `auth` extra): the signature
verified with the public key the proof carries, its claims decoded, and the key's
RFC 7638 thumbprint, which a bound token names in `cnf.jkt`."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import Key, import_key
from joserfc.jws import JWSRegistry

__all__ = ["open_proof"]

log = logging.getLogger("mcpgen.auth")
_decode_object = msgspec.json.Decoder(dict[str, Any]).decode
_KEYS_KEPT = 1024
# A client sends the same proof header (typ, alg, its key) on every request: the key
# imported from it, and its thumbprint, by the header's encoded text.
_keys: dict[str, tuple[Key, str]] = {}
_registries: dict[str, JWSRegistry] = {}


def _key_of(head: str, jwk: dict[str, Any]) -> tuple[Key, str]:
    found = _keys.get(head)
    if found is None:
        key = import_key(jwk)
        found = key, key.thumbprint()
        if len(_keys) >= _KEYS_KEPT:
            del _keys[next(iter(_keys))]
        _keys[head] = found
    return found


def _registry(alg: str) -> JWSRegistry:
    registry = _registries.get(alg)
    if registry is None:
        registry = JWSRegistry(algorithms=[alg])
        registry.max_header_length = 8 * 1024  # an RSA key in the header is over 512 bytes
        _registries[alg] = registry
    return registry


def open_proof(proof: str, jwk: dict[str, Any], alg: str) -> tuple[dict[str, Any], str] | str:
    """(claims, thumbprint) of a proof whose signature verifies with `jwk` under `alg`
    (both read from its header and checked by the caller), or why it does not."""
    try:
        key, thumbprint = _key_of(proof.split(".", 1)[0], jwk)
        payload = jws.deserialize_compact(proof, key, registry=_registry(alg)).payload
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        log.info("DPoP proof refused: %s", exc)
        return "the DPoP proof's signature or key is invalid"
    try:
        claims = _decode_object(payload)
    except (msgspec.DecodeError, ValueError):
        return "the DPoP proof's claims are not a JSON object"
    return claims, thumbprint
