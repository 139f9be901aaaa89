"""Where an OAuth client keeps what it obtained: the `Grant` (client registration and
tokens for one authorization server and one protected resource), behind the
`TokenStorage` Protocol, with an in-memory and a file implementation.

A grant stores the absolute expiry of its access token (not the `expires_in` it was
issued with), so a process that loads it later still knows when to refresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path
from typing import Protocol

import msgspec

__all__ = ["FileTokenStorage", "Grant", "InMemoryTokenStorage", "TokenStorage"]


class Grant(msgspec.Struct, kw_only=True):
    """A client registration at `issuer` and the tokens it holds for `resource`."""

    issuer: str
    resource: str
    client_id: str
    client_secret: str | None = None
    # How the client authenticates at the token endpoint: none, client_secret_basic,
    # client_secret_post or private_key_jwt.
    auth_method: str = "none"
    access_token: str | None = None
    token_type: str = "Bearer"
    refresh_token: str | None = None
    scope: str | None = None
    expires_at: float | None = None  # seconds since the epoch; None: no known expiry
    dpop_key: dict[str, str] | None = None  # the private JWK a DPoP-bound grant needs
    saved_at: float = 0.0
    issued_at: float | None = None  # when the access token was obtained

    def usable(self, margin: float = 30.0) -> bool:
        """An access token that will not expire within `margin` seconds, or within a
        quarter of its lifetime when that is shorter: a token living 10 s would
        otherwise be refreshed before every request."""
        if self.access_token is None:
            return False
        if self.expires_at is None:
            return True
        if self.issued_at is not None:
            margin = min(margin, (self.expires_at - self.issued_at) / 4)
        return self.expires_at - margin > time.time()


class TokenStorage(Protocol):
    """Persistence of grants, keyed by (issuer, resource)."""

    async def load(self, issuer: str, resource: str) -> Grant | None: ...

    async def save(self, grant: Grant) -> None: ...

    async def remove(self, issuer: str, resource: str) -> None: ...

    async def grants(self) -> list[Grant]:
        """Every stored grant (a client picks the one covering its server at start-up,
        before discovery has named the issuer)."""
        ...


class InMemoryTokenStorage:
    """Grants kept for the life of the process."""

    def __init__(self) -> None:
        self._grants: dict[tuple[str, str], Grant] = {}

    async def load(self, issuer: str, resource: str) -> Grant | None:
        return self._grants.get((issuer, resource))

    async def save(self, grant: Grant) -> None:
        self._grants[grant.issuer, grant.resource] = grant

    async def remove(self, issuer: str, resource: str) -> None:
        self._grants.pop((issuer, resource), None)

    async def grants(self) -> list[Grant]:
        return list(self._grants.values())


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Grant)


class FileTokenStorage:
    """One JSON file per grant in `directory` (`~` expanded; created 0700), each written atomically
    with mode 0600: the files hold secrets. The file name is a hash of the key, so
    no URL ever becomes a path."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory).expanduser()

    def path(self, issuer: str, resource: str) -> Path:
        digest = hashlib.sha256(f"{issuer}\n{resource}".encode()).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    async def load(self, issuer: str, resource: str) -> Grant | None:
        grant = self._read(self.path(issuer, resource))
        # A hash collision (or a hand-edited file) must not hand one server's tokens
        # to another.
        if grant is None or (grant.issuer, grant.resource) != (issuer, resource):
            return None
        return grant

    async def save(self, grant: Grant) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        target = self.path(grant.issuer, grant.resource)
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        grant.saved_at = time.time()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # the mode of an existing file is not reset by O_CREAT
            os.write(fd, _encoder.encode(grant))
        finally:
            os.close(fd)
        os.replace(temporary, target)

    async def remove(self, issuer: str, resource: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(issuer, resource).unlink()

    async def grants(self) -> list[Grant]:
        if not self.directory.is_dir():
            return []
        found = (self._read(path) for path in sorted(self.directory.glob("*.json")))
        return [grant for grant in found if grant is not None]

    @staticmethod
    def _read(path: Path) -> Grant | None:
        try:
            return _decoder.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            return None  # missing or unreadable: as if nothing were stored
