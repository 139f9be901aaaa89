"""A removal every worker has seen before it is answered: once a DELETE (or the create
whose quota evicted a session) has answered, no worker answers that session from its
cache.

The news of a removal (`d <id>`, published by the script that removes the record)
reaches the other workers asynchronously, over their subscriptions (under a Cluster
through the session's master and a forwarding link). Until it arrives a worker may
answer the session from its copy: its heartbeat says only that it is at most the
staleness bound behind. So the removing worker waits before it answers, and the
other workers acknowledge the news (`a <nonce> <id>`, published once they dropped the
record) to end that wait early:

- it waits for the news on its own subscription first. A worker trusts its copy only
  while a heartbeat of its own that Redis published before the news has come back
  (one published after would have come behind the news, and the record dropped);
  every such heartbeat reached this worker before the news did, so once the news is
  here, the workers that may hold the record are those heard from less than the bound
  ago (`peers`). That holds when this worker has been subscribed for the bound at least
  (a heartbeat sent before cannot vouch any more); a worker subscribed more recently
  waits for the last of the three below;
- then for each of those: its acknowledgement, or the end of its bound (its last
  heartbeat was sent before this worker heard it, so it trusts its copy no longer
  than that plus the bound);
- and in any case no longer than the bound after the removal's reply: every heartbeat
  that could still vouch for a copy was sent before it. This covers a subscription
  that is lost or hangs.

Normally the wait is one pub/sub hop there and back (well under a millisecond on one
host); a worker that hangs makes a DELETE wait up to the bound (one second by default),
never longer. The common path is unchanged: a request answered from the cache sends
nothing, and a heartbeat costs each receiver one dictionary write.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from redis import exceptions as rex

__all__ = ["Acknowledger", "Removal", "removing"]

T = TypeVar("T")

_FAILURES = (rex.RedisError, OSError, TimeoutError)  # an acknowledgement lost: a wait runs out


class Removal:
    """What a removing worker waits for about one session: its news, then each worker
    that may hold the record (its acknowledgement or the end of its bound)."""

    __slots__ = ("acked", "due", "until", "wake")

    def __init__(self) -> None:
        self.acked: set[bytes] = set()  # the workers (nonces) that dropped the record
        self.due: dict[bytes, float] | None = None  # once the news is here: peer -> trusted until
        self.until = float("inf")  # (monotonic) no worker trusts a copy after this
        self.wake: Callable[[], None] = lambda: None

    def replied(self, now: float, stale_after: float) -> None:
        """The removal's reply came at `now`: no heartbeat sent after it vouches for a copy."""
        self.until = now + stale_after

    def heard(self, peers: dict[bytes, float], stale_after: float) -> None:
        """The news reached this worker; `peers`: when each other worker's newest
        heartbeat reached it (monotonic)."""
        if self.due is None:
            self.due = {peer: heard + stale_after for peer, heard in peers.items()}
            self.wake()

    def ack(self, peer: bytes) -> None:
        self.acked.add(peer)
        self.wake()

    def left(self, now: float) -> float:
        """Seconds still to wait (0: no worker answers the session any more)."""
        end = self.until
        if self.due is not None:
            waiting = [t for peer, t in self.due.items() if peer not in self.acked and t > now]
            end = min(end, max(waiting, default=now))
        return max(0.0, end - now)


class Waiting(Protocol):
    """The side of a `SessionCache` a removal uses."""

    stale_after: float
    monotonic: Callable[[], float]

    def expect_removal(self, session_ids: list[str]) -> list[Removal]: ...

    def settled(self, session_ids: list[str], waits: list[Removal]) -> None: ...


async def removing(cache: Waiting | None, session_ids: list[str], removal: Awaitable[T]) -> T:
    """Run `removal` (its scripts publish `d <id>` for `session_ids`); return what it
    returned once every worker has dropped its copies, or can trust them no more."""
    if cache is None or not session_ids:
        return await removal
    waits = cache.expect_removal(session_ids)
    try:
        done = await removal
        for wait in waits:
            wait.replied(cache.monotonic(), cache.stale_after)
        await _wait_out(waits, cache.monotonic)
        return done
    finally:
        cache.settled(session_ids, waits)


async def _wait_out(waits: list[Removal], monotonic: Callable[[], float]) -> None:
    """Return once no worker answers the removed sessions any more (see the module
    docstring); each `Removal` has had `replied`, so this is bounded."""
    wake = asyncio.Event()
    for removal in waits:
        removal.wake = wake.set
    while True:
        now = monotonic()
        left = max((removal.left(now) for removal in waits), default=0.0)
        if left <= 0:
            return
        wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), left)


class Acknowledger:
    """Publishes this worker's acknowledgement of a removal's news, off the path that
    received it (`SessionCache.acknowledge`)."""

    def __init__(self, client: Any, channel: str, nonce: bytes) -> None:
        self.client = client
        self.channel = channel
        self.prefix = b"a " + nonce + b" "
        self.tasks: set[asyncio.Task[None]] = set()

    def __call__(self, session_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._send(session_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _send(self, session_id: str) -> None:
        with contextlib.suppress(*_FAILURES):
            await self.client.publish(self.channel, self.prefix + session_id.encode())

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
