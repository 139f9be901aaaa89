"""The server side: a `Session` that records a SERVER span per incoming request or
notification and a CLIENT span per server-to-client request of a legacy session.

`Server(telemetry=True)` builds its sessions from `TracedSession` instead of `Session`;
nothing else in the server changes. A span ends when its reply is settled: at once for
an immediate reply, when pending work ends (the work's coroutine is watched, and runs
with the span as the current context, so the handler's own spans nest under it), or
when a deferred reply goes out through the request's channel.
"""

from __future__ import annotations

import time
from collections.abc import Coroutine, Generator
from contextvars import Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, SpanKind

from mcpgen._server import Channel, Session
from mcpgen._server._call import DEFERRED, Handle, Outcome, Pending, RequestId
from mcpgen._server._core import ServerCore
from mcpgen.telemetry._common import (
    CLIENT_OPERATIONS,
    SERVER_OPERATIONS,
    SERVER_SESSIONS,
    Envelope,
    LinkBook,
    Operation,
    glance,
    inject_meta,
    metering,
    notable,
    probe,
    quiet,
    remote_parent,
    tracing,
)
from mcpgen.telemetry._logs import current_request, install_log_context

__all__ = ["TracedSession"]

_operations = SERVER_OPERATIONS
_client_operations = CLIENT_OPERATIONS
_sessions = SERVER_SESSIONS
# MRTR rounds (by requestState) and tasks (by task id) of the whole process: a stateless
# HTTP request gets a fresh session, and the next round may arrive on any of them.
_book = LinkBook()


def _names_a_parent(line: bytes | str) -> bool:
    # `find` is the cheaper scan (`in` takes the sequence-protocol detour).
    if type(line) is bytes:
        return line.find(b'"traceparent"') >= 0
    return str(line).find('"traceparent"') >= 0


install_log_context("mcpgen.server")


def _transport(channel: Channel | None) -> dict[str, Any]:
    """The conventions' transport attributes: HTTP carries headers; stdio and memory
    channels do not (neither is named: a memory channel is no pipe)."""
    if channel is None or channel.headers is None:
        return {}
    return {"network.transport": "tcp", "network.protocol.name": "http"}


class TracedSession(Session):
    """A `Session` that records spans and durations (see the module docstring)."""

    def __init__(self, core: ServerCore, channel: Channel | None = None) -> None:
        super().__init__(core, channel)
        self.started = time.perf_counter()
        self.transport: dict[str, Any] | None = None  # known at the first message
        self.outgoing: dict[RequestId, Operation] = {}  # our requests to the client
        self.waiting: dict[int, Operation] = {}  # deferred replies, by id(operation)

    def receive(self, line: bytes | str, channel: Channel) -> Outcome:
        silent = quiet()
        if silent and not self.outgoing and not _names_a_parent(line):
            # Only the log context to keep, read from the frame if a record is made.
            mark = current_request.set(line)
            try:
                outcome = Session.receive(self, line, channel)
            finally:
                current_request.reset(mark)
            if type(outcome) is Pending:
                self._watch(line, outcome)
            return outcome
        parent: Context | None = None
        if silent:
            seen = glance(line)
            env, parent = seen if seen is not None else (None, None)
        else:
            env = probe(line)
        if env is None or (env.method is None and env.id is None):
            return super().receive(line, channel)
        if type(env.method) is not str:  # a response to one of our requests
            outcome = super().receive(line, channel)
            rid = env.id
            answered = self.outgoing.pop(rid, None) if isinstance(rid, str | int) else None
            if answered is not None:
                answered.end_with(env)
            return outcome
        op = (
            Operation(env, SpanKind.SERVER, parent, [], {}, _operations)
            if silent
            else self._start(env, channel)
        )
        idle = op.ctx is None and op.histogram is None  # only the log context to keep
        tapped = _Tap(channel, self, op) if env.id is not None and not idle else channel
        token = otel_context.attach(op.ctx) if op.ctx is not None else None
        mark = current_request.set((op.method, op.rid))
        try:
            outcome = super().receive(line, tapped)
        finally:
            current_request.reset(mark)
            if token is not None:
                otel_context.detach(token)
        if op.method == "initialize" and self.legacy_version is not None:
            op.note("mcp.protocol.version", self.legacy_version)  # negotiated just now
        return self.settled(op, outcome)

    def _watch(self, line: bytes | str, outcome: Pending) -> None:
        """The log context goes with pending work (nothing records)."""
        seen = glance(line)
        if seen is not None:
            op = Operation(seen[0], SpanKind.SERVER, None, [], {}, _operations)
            outcome.coro = _Watched(outcome.coro, op, self)

    def _start(self, env: Envelope, channel: Channel) -> Operation:
        params = env.params
        parent = remote_parent(params.meta) if params is not None else None
        if self.transport is None:
            self.transport = _transport(channel)
        attrs = dict(self.transport)
        legacy = self.legacy_version
        if legacy is not None:
            attrs["mcp.protocol.version"] = legacy
            sid = channel.headers.get("mcp-session-id") if channel.headers else None
            if sid:
                attrs["mcp.session.id"] = sid
        if not tracing():
            return Operation(env, SpanKind.SERVER, parent, [], attrs, _operations)
        links = _book.links(env)
        current = otel_context.get_current()
        ambient = trace.get_current_span(current).get_span_context() if current else None
        if ambient is not None and ambient.is_valid:
            # e.g. an HTTP server span around us: a link, not the parent
            links.append(Link(ambient, {"mcpgen.link": "transport"}))
        return Operation(env, SpanKind.SERVER, parent, links, attrs, _operations)

    def settled(self, op: Operation, outcome: Outcome) -> Outcome:
        """End `op` as far as `outcome` allows; return the outcome to deliver."""
        if isinstance(outcome, bytes):
            self.ended(op, outcome)
        elif type(outcome) is Pending:
            outcome.coro = _Watched(outcome.coro, op, self)
        elif outcome is DEFERRED:
            self.waiting[id(op)] = op  # `_Tap.reply` ends it, or `close`
        else:
            op.end(None, None)
        return outcome

    def ended(self, op: Operation, reply: bytes) -> None:
        if op.histogram is None and op.ctx is None:  # nothing to read the reply for
            op.end(None, None)
            self.waiting.pop(id(op), None)
            return
        # Most replies are plain successes: decode only those that may say more.
        found = probe(reply) if notable(reply) else None
        if found is not None and found.result is not None and op.ctx is not None:
            _book.put(found.result.request_state, op.span)
            _book.put(found.result.task_id, op.span)
        op.end_with(found)
        self.waiting.pop(id(op), None)

    def request_out(self, frame: bytes, parent: Context | None) -> bytes:
        """A server-to-client request (legacy sessions): a CLIENT span until the client
        answers, under the span of the request that asked; the frame to send, with the
        span's trace context in its `_meta`."""
        env = probe(frame)
        if env is None or type(env.id) not in (str, int):
            return frame
        attrs = dict(self.transport or {})
        if self.legacy_version is not None:
            attrs["mcp.protocol.version"] = self.legacy_version
        op = Operation(env, SpanKind.CLIENT, parent, [], attrs, _client_operations)
        if op.ctx is None and op.histogram is None:
            return frame
        self.outgoing[env.id] = op  # type: ignore[index]  # checked just above
        return inject_meta(frame, op.ctx) if op.ctx is not None else frame

    def close(self) -> None:
        super().close()
        if self.waiting or self.outgoing:
            for op in [*self.waiting.values(), *self.outgoing.values()]:
                op.end("cancelled", "the session ended")
            self.waiting.clear()
            self.outgoing.clear()
        if self.legacy is None:  # a stateless request's session: no session duration
            return
        version = self.legacy_version
        if version is not None:
            attrs = {"mcp.protocol.version": version, **(self.transport or {})}
            if metering():
                _sessions.record(time.perf_counter() - self.started, attrs)


class _Tap(Channel):
    """The request's channel as the core sees it: everything goes to the transport's
    channel; a deferred reply ends the request's span, a request to the client
    starts one."""

    __slots__ = ("auth", "headers", "inner", "op", "principal", "session")

    def __init__(self, inner: Channel, session: TracedSession, op: Operation) -> None:
        self.inner = inner
        self.session = session
        self.op = op
        self.headers = inner.headers
        self.principal = inner.principal
        self.auth = inner.auth

    def notify(self, frame: bytes) -> None:
        self.inner.notify(frame)

    def request(self, frame: bytes) -> bool | None:
        return self.inner.request(self.session.request_out(frame, self.op.ctx))

    def reply(self, frame: bytes) -> None:
        if not self.op.done:
            self.session.ended(self.op, frame)
        self.inner.reply(frame)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Handle:
        return self.inner.spawn(coro)


class _Watched(Coroutine[Any, Any, Outcome]):
    """Pending work, watched: it runs with the request's span as the current context
    (the task it runs in was made for it alone) and ends the span with its outcome."""

    __slots__ = ("coro", "mark", "op", "session", "token")

    def __init__(
        self, coro: Coroutine[Any, Any, Outcome], op: Operation, session: TracedSession
    ) -> None:
        self.coro = coro
        self.op = op
        self.session = session
        self.token: Token[Context] | None = None
        self.mark: Token[tuple[str, str | None] | bytes | str | None] | None = None

    def __await__(self) -> Generator[Any, None, Outcome]:
        return self  # an iterator with send and throw is what `await` drives

    def __next__(self) -> Any:
        return self.send(None)

    def __iter__(self) -> _Watched:
        return self

    def send(self, value: Any) -> Any:
        return self._step(self.coro.send, value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        if val is None and tb is None:
            return self._step(self.coro.throw, typ)
        return self._step(lambda _: self.coro.throw(typ, val, tb), None)

    def close(self) -> None:
        self.coro.close()
        self._leave()
        self.op.end("cancelled", "the request was cancelled")

    def _step(self, fn: Any, value: Any) -> Any:
        if self.mark is None:
            if self.op.ctx is not None:
                self.token = otel_context.attach(self.op.ctx)
            self.mark = current_request.set((self.op.method, self.op.rid))
        try:
            return fn(value)
        except StopIteration as stop:
            self._leave()
            self._finish(stop.value)
            raise
        except BaseException as exc:
            self._leave()
            self.op.failed(exc)
            raise

    def _leave(self) -> None:
        if self.mark is not None:
            current_request.reset(self.mark)
            self.mark = None
        if self.token is not None:
            otel_context.detach(self.token)
            self.token = None

    def _finish(self, outcome: Outcome) -> None:
        if type(outcome) is Pending:  # more work: watch that too
            outcome.coro = _Watched(outcome.coro, self.op, self.session)
        elif isinstance(outcome, bytes):
            self.session.ended(self.op, outcome)
        elif outcome is DEFERRED:
            self.session.waiting[id(self.op)] = self.op
        else:
            self.op.end(None, None)
