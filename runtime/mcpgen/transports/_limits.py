"""Limits the HTTP app enforces itself, so that one slow or greedy client cannot hold
what the others need: a deadline for a request's body, and the client key its quotas
count against (`mcpgen.stores.client_key`).

A body that trickles in (a few bytes now and then, the slow-POST form of slowloris)
would hold a connection and a task for as long as the client likes; `BodyDeadlines`
cancels a POST still reading its body `HttpOptions.body_timeout_seconds` after its
headers arrived, and `body_too_slow` answers 408 and closes the connection. Only the
body is bounded: once it has arrived, the request (a tool call that runs long, a
stream that lasts) is not. Header deadlines and idle connections are the server's business
(`_uvicorn`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcpgen import _jsonrpc as rpc
from mcpgen.stores._quota import client_key
from mcpgen.transports._asgi import Scope, Send, json_response

__all__ = ["BodyDeadlines", "body_too_slow", "client_of", "peer_of"]


_TASK = "mcpgen.body_reader"  # the scope key of the task reading the request's body
_TICKS = 10  # sweeps per deadline: a body is cut off at most a tenth of it late


class BodyDeadlines:
    """The POSTs whose body is being read and one sweep (while any is) that cancels
    those past their deadline. The sweep ticks `_TICKS` times per deadline and a
    request's deadline is a tick count, so a body that is there at once (the common
    case) costs a dict entry made and dropped: no timer, no clock, no wrapper.

    The app calls `reading(scope)` when a POST starts, `read(scope)` once its body is
    in, and `expired(scope)` when the request was cancelled, to learn whether this was
    the cause."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.period = max(0.01, seconds / _TICKS)
        self._tick = 0
        self._reading: dict[asyncio.Task[Any], int] = {}  # request's task -> tick it began
        self._expired: set[asyncio.Task[Any]] = set()
        self._sweep: asyncio.Task[None] | None = None

    def reading(self, scope: Scope) -> None:
        """The request of `scope` (the running task) starts reading its body."""
        task = scope[_TASK] = asyncio.current_task()
        if task is None:
            return
        self._reading[task] = self._tick
        sweep = self._sweep
        if sweep is None or sweep.done():
            self._sweep = asyncio.ensure_future(self._cut_off())

    def read(self, scope: Scope) -> None:
        """The body of `scope`'s request is in (or will not be read): no deadline now."""
        task = scope.get(_TASK)
        if task is not None:
            self._reading.pop(task, None)

    def expired(self, scope: Scope) -> bool:
        """Whether `scope`'s request was cancelled for being past its deadline (then
        the cancellation is taken back, so the request may still answer)."""
        task = scope.get(_TASK)
        if task is None or task not in self._expired:
            return False
        self._expired.discard(task)
        task.uncancel()
        return True

    async def _cut_off(self) -> None:
        reading = self._reading
        while True:  # (asleep first: one sweep lives a period at least, not a request)
            await asyncio.sleep(self.period)
            if not reading:
                return
            self._tick += 1
            late = self._tick - _TICKS
            for task, began in list(reading.items()):
                if began <= late:
                    del reading[task]
                    self._expired.add(task)
                    task.cancel()


async def body_too_slow(send: Send, seconds: float) -> None:
    """Answer 408 and have the server close the connection (the rest of the body, if it
    ever comes, is not read)."""
    frame = rpc.error_frame(
        None, rpc.INVALID_REQUEST, f"the request body took over {seconds:g} seconds", status=408
    )
    with contextlib.suppress(RuntimeError, OSError):  # it had started: nothing more to say
        await json_response(send, frame, 408, [(b"connection", b"close")])


def peer_of(scope: Scope) -> str | None:
    """The address the request came from (behind a proxy, the one uvicorn takes from
    `X-Forwarded-For` when the proxy is in its `forwarded_allow_ips`)."""
    peer = scope.get("client")
    return str(peer[0]) if peer else None


def client_of(scope: Scope) -> str | None:
    """Whom the request's quotas count against: its principal (set by the auth gate),
    else the address it came from."""
    return client_key(scope.get("mcpgen.principal"), peer_of(scope))
