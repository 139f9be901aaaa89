"""Limits the HTTP app enforces itself, so that one slow or greedy client cannot hold
what the others need: a deadline for a request's body, and the client key its quotas
count against (`mcpgen.stores.client_key`).

A body that trickles in (a few bytes now and then, the slow-POST form of slowloris)
would hold a connection and a task for as long as the client likes; the app reads
every POST body through `bounded_body`, which raises `BodyTimeoutError` once
`HttpOptions.body_timeout_seconds` have passed since the request's headers arrived, and
`body_too_slow` answers 408 and closes the connection. Only the body is bounded: once
it has arrived, reading `receive` (waiting for the client to go away, on a stream that
lasts) is not. Header deadlines and idle connections are the server's business
(`_uvicorn`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcpgen import _jsonrpc as rpc
from mcpgen.stores._quota import client_key
from mcpgen.transports._asgi import Receive, Scope, Send, json_response

__all__ = ["BodyTimeoutError", "body_too_slow", "bounded_body", "client_of", "peer_of"]


class BodyTimeoutError(Exception):
    """The request's body did not arrive in time."""


def bounded_body(receive: Receive, seconds: float) -> Receive:
    """`receive`, raising `BodyTimeoutError` when the body is not complete `seconds` from now."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    complete = False

    async def bounded() -> dict[str, Any]:
        nonlocal complete
        if complete:
            return await receive()
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise BodyTimeoutError from None
        if message["type"] != "http.request" or not message.get("more_body", False):
            complete = True
        return message

    return bounded


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
