"""The in-memory key ring: the secrets that seal `requestState` and list cursors.

A sealed token names the key that sealed it (its key id), so opening costs one HMAC.
A key id is a digest prefix of the secret, not a counter: two workers given the same
secrets agree on every id without talking to each other.

Rotation in three steps, on every worker: `rotate(new)` (new tokens use `new`, tokens
sealed with the old keys still open), wait out the longest token lifetime (the
`requestState` ttl; cursors have none, so a client holding an old cursor gets -32602
and starts the list again), then `retire(old_id)`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from mcpgen._errors import ConfigurationError

__all__ = ["ENV_VAR", "InMemoryKeyRing", "key_id"]

ENV_VAR = "MCPGEN_STATE_KEYS"
_MIN_BYTES = 16


def key_id(secret: bytes) -> str:
    """The id every worker derives for `secret` (8 hex characters of its SHA-256)."""
    # Imported on first use: a server that never seals anything never loads OpenSSL.
    import hashlib  # noqa: PLC0415

    return hashlib.sha256(secret).hexdigest()[:8]


def _raw(key: bytes | str) -> bytes:
    raw = key.encode() if isinstance(key, str) else key
    if len(raw) < _MIN_BYTES:
        raise ConfigurationError(f"state keys must be at least {_MIN_BYTES} bytes long")
    return raw


class InMemoryKeyRing:
    """Keys held by this process, newest first: the newest seals, all of them open.

    Several workers behind one endpoint must hold the same keys, or a token sealed by
    one is refused by the next (a client's retry lands anywhere). Give every worker the
    same list, e.g. `MCPGEN_STATE_KEYS` in the environment they share (read by
    `from_env`), or a `KeyRing` of your own that reads a secret store. A ring built
    with no keys invents a random one: fine for one process, wrong for several.
    """

    def __init__(self, keys: Sequence[bytes | str]) -> None:
        if not keys:
            raise ConfigurationError("a key ring needs at least one key")
        self._raw = [_raw(key) for key in keys]
        self._by_id: dict[str, bytes] | None = None

    @property
    def _keys(self) -> dict[str, bytes]:
        """Key id -> secret; insertion order is age order, the first entry the newest.
        Built on first use (see `key_id`)."""
        if self._by_id is None:
            self._by_id = {}
            for raw in self._raw:
                self._by_id.setdefault(key_id(raw), raw)
        return self._by_id

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> InMemoryKeyRing:
        """Keys from `MCPGEN_STATE_KEYS` (comma-separated, newest first, each at least
        16 bytes); a fresh random key when it is unset or empty, which only a single
        process may rely on."""
        value = (os.environ if environ is None else environ).get(ENV_VAR, "")
        keys = [k for k in value.split(",") if k]
        return cls(keys or [os.urandom(32)])

    def sealing_key(self) -> tuple[str, bytes]:
        kid = next(iter(self._keys))
        return kid, self._keys[kid]

    def opening_key(self, key_id: str) -> bytes | None:
        return self._keys.get(key_id)

    def ids(self) -> list[str]:
        """The key ids, newest first."""
        return list(self._keys)

    def rotate(self, key: bytes | str) -> str:
        """Make `key` the newest (sealing) key; the others keep opening. Returns its id."""
        raw = _raw(key)
        kid = key_id(raw)
        rest = {k: v for k, v in self._keys.items() if k != kid}
        self._by_id = {kid: raw, **rest}
        return kid

    def retire(self, key_id: str) -> None:
        """Stop opening tokens sealed with `key_id` (the sealing key cannot be retired)."""
        if key_id == next(iter(self._keys)):
            raise ConfigurationError("rotate to a new key before retiring the sealing key")
        self._keys.pop(key_id, None)
