"""The client side: a CLIENT span per outgoing request or notification, its trace
context written into `params._meta`, and the operation and session durations.

`Client(telemetry=True)` replaces its connection's exchange function (the one every
request goes through) and its link's `send` (for notifications) with watched ones,
once, at construction; a client without telemetry runs the plain ones.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind

from mcpgen._client import ClientCore, Incoming, RequestId
from mcpgen.telemetry._common import (
    CLIENT_OPERATIONS,
    CLIENT_SESSIONS,
    SERVER_OPERATIONS,
    Envelope,
    LinkBook,
    Operation,
    Params,
    ReplyError,
    inject_meta,
    notable,
    probe,
    quiet,
    remote_parent,
)
from mcpgen.telemetry._logs import current_request, install_log_context
from mcpgen.transports._link_base import Link

__all__ = ["Connection", "instrument"]

_operations = CLIENT_OPERATIONS
_sessions = CLIENT_SESSIONS
_book = LinkBook()
install_log_context("mcpgen.client")

Answer = tuple[Incoming, int | None]  # a request's answer and the HTTP status it came with
Exchange = Callable[[RequestId, bytes, Mapping[str, str], float | None], Awaitable[Answer]]


class Connection(Protocol):
    """What is watched of a client's connection (`mcpgen.client`'s `Connection`, which
    this package sits below): its exchange, its link's `send`, its close, and how it
    serves a server's request."""

    link: Link
    core: ClientCore
    closed: bool

    async def _exchange(
        self, rid: RequestId, frame: bytes, headers: Mapping[str, str], timeout: float | None
    ) -> Answer: ...

    async def _serve_request(self, incoming: Incoming) -> None: ...

    async def close(self) -> None: ...


def _attrs(connection: Connection) -> dict[str, Any]:
    link = connection.link
    attrs: dict[str, Any] = {}
    if link.http:
        attrs["network.transport"] = "tcp"
        attrs["network.protocol.name"] = "http"
    elif type(link).__name__ == "StdioLink":
        attrs["network.transport"] = "pipe"
    return attrs


def _session_attrs(connection: Connection, attrs: dict[str, Any]) -> dict[str, Any]:
    version = connection.core.version
    if version:
        attrs["mcp.protocol.version"] = version
    sid = getattr(connection.link, "session_id", None)
    if type(sid) is str and sid:
        attrs["mcp.session.id"] = sid
    return attrs


def _request_id(rid: object) -> str | None:
    return None if rid is None or type(rid) is bool else str(rid)


def _answer(incoming: Incoming) -> Envelope:
    """The reply as the operation reads it (an error code, isError, MRTR state)."""
    env = Envelope(id=incoming.id)
    if incoming.kind == "error" and incoming.error is not None:
        error = incoming.error
        env.error = ReplyError(code=error.get("code"), message=error.get("message"))
    elif incoming.result is not None:
        raw = bytes(incoming.result)
        if notable(raw):
            found = probe(b'{"result":' + raw + b"}")
            env.result = found.result if found is not None else None
    return env


def _idle() -> bool:
    """Nothing records and nothing is current to pass on (the usual case when no SDK
    is configured): a message needs only the log context."""
    return quiet() and not otel_context.get_current()


def instrument(connection: Connection) -> None:
    """Watch `connection`'s requests and notifications (see the module docstring)."""
    exchange: Exchange = connection._exchange
    send = connection.link.send
    close = connection.close
    serve = connection._serve_request
    transport = _attrs(connection)
    started: list[float] = []

    async def traced_exchange(
        rid: RequestId, frame: bytes, headers: Mapping[str, str], timeout: float | None
    ) -> Answer:
        if not started:
            started.append(time.perf_counter())
        if _idle():
            mark = current_request.set(frame)  # read only if a record is made
            try:
                return await exchange(rid, frame, headers, timeout)
            finally:
                current_request.reset(mark)
        env = probe(frame)
        if env is None:
            return await exchange(rid, frame, headers, timeout)
        attrs = _session_attrs(connection, dict(transport))
        op = Operation(env, SpanKind.CLIENT, None, _book.links(env), attrs, _operations)
        mark = current_request.set((op.method, op.rid))
        try:
            incoming, status = await exchange(rid, inject_meta(frame, op.ctx), headers, timeout)
        except BaseException as exc:
            op.failed(exc)
            raise
        finally:
            current_request.reset(mark)
        answer = _answer(incoming)
        if answer.result is not None and op.ctx is not None:
            _book.put(answer.result.request_state, op.span)
            _book.put(answer.result.task_id, op.span)
        op.end_with(answer)
        return incoming, status

    async def traced_send(
        frame: bytes, headers: Mapping[str, str] | None = None, request_id: RequestId | None = None
    ) -> None:
        env = probe(frame) if request_id is None and not _idle() else None
        if env is None or env.id is not None or type(env.method) is not str:
            await send(frame, headers, request_id)  # a request (its exchange has a span)
            return
        attrs = _session_attrs(connection, dict(transport))
        op = Operation(env, SpanKind.CLIENT, None, [], attrs, _operations)
        try:
            await send(inject_meta(frame, op.ctx), headers, request_id)
        except BaseException as exc:
            op.failed(exc)
            raise
        op.end(None, None)

    async def traced_serve(incoming: Incoming) -> None:
        """A server-to-client request (legacy sessions): the client is its receiver."""
        params = incoming.params or {}
        meta = params.get("_meta")
        if _idle() and (type(meta) is not dict or "traceparent" not in meta):
            mark = current_request.set((incoming.method or "", _request_id(incoming.id)))
            try:
                await serve(incoming)
            finally:
                current_request.reset(mark)
            return
        env = Envelope(id=incoming.id, method=incoming.method, params=Params(meta=meta))
        attrs = _session_attrs(connection, dict(transport))
        parent = remote_parent(env.params.meta) if env.params is not None else None
        op = Operation(env, SpanKind.SERVER, parent, [], attrs, SERVER_OPERATIONS)
        token = otel_context.attach(op.ctx) if op.ctx is not None else None
        mark = current_request.set((op.method, op.rid))
        try:
            await serve(incoming)
        except BaseException as exc:
            op.failed(exc)
            raise
        finally:
            current_request.reset(mark)
            if token is not None:
                otel_context.detach(token)
        op.end(None, None)

    async def traced_close() -> None:
        was_open = not connection.closed
        await close()
        if was_open and started:
            attrs = _session_attrs(connection, dict(transport))
            attrs.pop("mcp.session.id", None)
            _sessions.record(time.perf_counter() - started[0], attrs)

    connection._exchange = traced_exchange  # type: ignore[method-assign]
    connection.link.send = traced_send  # type: ignore[method-assign]
    connection.close = traced_close  # type: ignore[method-assign]
    connection._serve_request = traced_serve  # type: ignore[method-assign]
