"""What keeps an authorization server's trouble from becoming every client's: a
bounded cache of refusals, and a circuit that stops asking a server that fails.

`Refusals` remembers tokens the server said were not active (by a digest of the token,
so its memory stays bounded whatever tokens are sent), least recently used out first,
each for `ttl` seconds: a client replaying a garbage or revoked token costs one
question per `ttl`, not one per request.

`Circuit` counts consecutive failures to get an answer (a connection refused, a
timeout, a 5xx, a body that is no JSON object). After `threshold` of them it opens:
for `backoff` seconds every question fails at once (`VerifierUnavailableError`, which
the HTTP app answers with 503 and `Retry-After`) instead of waiting out the timeout for
each new token. Then one question is let through as a probe while the others still
fail fast; an answer closes the circuit, another failure opens it again for twice as
long, up to `max_backoff`.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from mcpgen.stores import StoreUnavailableError

__all__ = ["Circuit", "Refusals", "VerifierUnavailableError"]


class VerifierUnavailableError(StoreUnavailableError):
    """The authorization server a verifier asks cannot be reached, fails, or is being
    left alone for a while (its circuit is open): no token can be judged now. The HTTP
    app answers 503 with `Retry-After`, as for a shared store that is down."""


class Refusals:
    """Tokens recently refused by the authorization server, with why (see the module
    docstring); `ttl` 0 or `max_size` 0 keeps none."""

    def __init__(
        self, ttl: float = 30.0, max_size: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.max_size = max_size
        self.clock = clock
        self._entries: OrderedDict[bytes, tuple[str, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def _key(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()

    def get(self, token: str) -> str | None:
        key = self._key(token)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, token: str, reason: str) -> None:
        if self.ttl <= 0 or self.max_size <= 0:
            return
        key = self._key(token)
        self._entries[key] = (reason, self.clock() + self.ttl)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_size:
            self._entries.popitem(last=False)


class Circuit:
    """Whether to ask the authorization server now (see the module docstring)."""

    def __init__(
        self,
        threshold: int = 3,
        backoff: float = 2.0,
        max_backoff: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = threshold
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.clock = clock
        self.failures = 0  # consecutive
        self.open_until = 0.0
        self._wait = backoff  # the next open period
        self._probing = False

    def admit(self) -> None:
        """Raise `VerifierUnavailableError` when no question may be asked now; else the
        caller asks and reports with `succeeded` or `failed`."""
        if self.failures < self.threshold:
            return
        now = self.clock()
        if now < self.open_until or self._probing:
            raise VerifierUnavailableError(
                f"the authorization server failed {self.failures} times in a row; "
                f"not asked again for {max(0.0, self.open_until - now):.1f} s"
            )
        self._probing = True  # half open: this question is the probe

    def succeeded(self) -> None:
        self.failures, self._wait, self._probing = 0, self.backoff, False

    def failed(self) -> None:
        self.failures += 1
        if self.failures >= self.threshold:
            if self._probing:  # the probe failed too: wait longer this time
                self._wait = min(self._wait * 2, self.max_backoff)
            self.open_until = self.clock() + self._wait
        self._probing = False

    @property
    def retry_after(self) -> float:
        return max(0.0, self.open_until - self.clock())
