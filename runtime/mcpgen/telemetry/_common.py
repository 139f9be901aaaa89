"""What both sides share: the tracer and meters, the envelope and reply probes, the
span attributes of one message, and how a span ends.

A probe decodes only the few fields a span needs (method, id, tool or prompt name,
resource URI, task id, requestState, `_meta`); arguments and result content are skipped
by the decoder and never reach a span or a log record.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from typing import Any, Final

import msgspec
from opentelemetry import metrics, trace
from opentelemetry import trace as _trace_api
from opentelemetry.context import Context
from opentelemetry.metrics import _internal as _metrics_api
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.propagate import extract, inject
from opentelemetry.trace import (
    INVALID_SPAN,
    Link,
    NoOpTracerProvider,
    ProxyTracerProvider,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
)

from mcpgen import _protocol as proto

__all__ = [
    "CLIENT_OPERATIONS",
    "CLIENT_SESSIONS",
    "SERVER_OPERATIONS",
    "SERVER_SESSIONS",
    "Envelope",
    "LinkBook",
    "Operation",
    "Params",
    "ReplyError",
    "glance",
    "inject_meta",
    "notable",
    "probe",
    "quiet",
    "remote_parent",
]

SCOPE: Final = "mcpgen"
# The conventions' advice for every MCP duration histogram (seconds).
BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
# The method whose params name a target that goes into the span name, and its attribute.
TARGETS: Final = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
URI_METHODS: Final = frozenset(
    {"resources/read", "resources/subscribe", "resources/unsubscribe",
     "notifications/resources/updated"}
)  # fmt: skip
TASK_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/cancel", "tasks/update"})
# Span attributes that would make a metric series per request: never metric attributes.
SPAN_ONLY: Final = ("jsonrpc.request.id", "mcp.session.id", "mcp.resource.uri")


def notable(reply: bytes) -> bool:
    """Whether a reply may be more than a plain success (an error, a tool error, an
    input round's state, a task); the others are never decoded."""
    return (
        b'"error"' in reply
        or b'"isError"' in reply
        or b'"requestState"' in reply
        or b'"taskId"' in reply
    )


tracer = trace.get_tracer(SCOPE)
_meter = metrics.get_meter(SCOPE)
# Until an application sets real providers, the API's proxies stand in and record
# nothing; a global provider is set once, so a real one, once seen, stays. Asking the
# API for its provider reads the environment each time (a provider may be named
# there); the module variable it fills answers first, when the API still has it.
_NOOP_TRACING: Final = (ProxyTracerProvider, NoOpTracerProvider)
_NOOP_METERING: Final = (metrics.NoOpMeterProvider, _ProxyMeterProvider)
_BY_ENV: Final = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
# Read once: the environment names a provider before the application starts, if at all.
_ENVIRON: Final = frozenset(name for name in _BY_ENV if name in os.environ)
_live = [False, False]  # [tracing, metering]


def tracing() -> bool:
    """Whether spans may record (a real tracer provider is set)."""
    if _live[0]:
        return True
    if getattr(_trace_api, "_TRACER_PROVIDER", 0) is None and _BY_ENV[0] not in _ENVIRON:
        return False
    _live[0] = not isinstance(trace.get_tracer_provider(), _NOOP_TRACING)
    return _live[0]


def metering() -> bool:
    """Whether histograms record (a real meter provider is set)."""
    if _live[1]:
        return True
    if getattr(_metrics_api, "_METER_PROVIDER", 0) is None and _BY_ENV[1] not in _ENVIRON:
        return False
    _live[1] = not isinstance(metrics.get_meter_provider(), _NOOP_METERING)
    return _live[1]


# Whether the API's module variables can answer `quiet` on their own (they exist, and
# no provider is named in the environment).
_GLOBALS: Final = (
    not _ENVIRON
    and hasattr(_trace_api, "_TRACER_PROVIDER")
    and hasattr(_metrics_api, "_METER_PROVIDER")
)


def quiet() -> bool:
    """Neither spans nor histograms record: the attributes, links and probes only they
    read are not worth computing."""
    if _GLOBALS and _trace_api._TRACER_PROVIDER is None and _metrics_api._METER_PROVIDER is None:
        return True  # the usual case, without two more calls
    return not tracing() and not metering()


def histogram(name: str, description: str) -> metrics.Histogram:
    return _meter.create_histogram(
        name, unit="s", description=description, explicit_bucket_boundaries_advisory=BUCKETS
    )


# One instrument per name for the whole process: each side records into the ones it needs.
SERVER_OPERATIONS: Final = histogram(
    "mcp.server.operation.duration",
    "MCP request or notification duration as observed on the receiver.",
)
CLIENT_OPERATIONS: Final = histogram(
    "mcp.client.operation.duration",
    "MCP request or notification duration as observed on the sender.",
)
SERVER_SESSIONS: Final = histogram(
    "mcp.server.session.duration", "The duration of the MCP session as observed on the server."
)
CLIENT_SESSIONS: Final = histogram(
    "mcp.client.session.duration", "The duration of the MCP session as observed on the client."
)


class Params(msgspec.Struct, gc=False):
    name: object = None
    uri: object = None
    task_id: object = msgspec.field(default=None, name="taskId")
    request_state: object = msgspec.field(default=None, name="requestState")
    meta: object = msgspec.field(default=None, name="_meta")
    protocol_version: object = msgspec.field(default=None, name="protocolVersion")


class ReplyError(msgspec.Struct, gc=False):
    code: object = None
    message: object = None


class _Result(msgspec.Struct, gc=False):
    is_error: object = msgspec.field(default=None, name="isError")
    result_type: object = msgspec.field(default=None, name="resultType")
    request_state: object = msgspec.field(default=None, name="requestState")
    task_id: object = msgspec.field(default=None, name="taskId")


class Envelope(msgspec.Struct, gc=False):
    """One frame, as far as telemetry reads it."""

    id: object = None
    method: object = None
    params: Params | None = None
    result: _Result | None = None
    error: ReplyError | None = None


_decode = msgspec.json.Decoder(Envelope).decode
_decode_any = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def probe(frame: bytes | str) -> Envelope | None:
    """The telemetry fields of one frame; None for a batch or anything unreadable (the
    core answers those; no span is made for them)."""
    try:
        return _decode(frame)
    except (msgspec.DecodeError, RecursionError):
        return None


class _Trace(msgspec.Struct, gc=False):
    traceparent: object = None
    tracestate: object = None
    baggage: object = None


class _GlanceParams(msgspec.Struct, gc=False):
    meta: _Trace | None = msgspec.field(default=None, name="_meta")


class _Glance(msgspec.Struct, gc=False):
    """What a message needs when nothing records: its method, its id (the log
    context) and a peer's trace context; the rest of `_meta` is skipped, not built."""

    id: object = None
    method: object = None
    params: _GlanceParams | None = None


_decode_glance = msgspec.json.Decoder(_Glance).decode


def glance(frame: bytes | str) -> tuple[Envelope, Context | None] | None:
    """`probe` for when nothing records: the frame's method and id, and the remote
    parent its `_meta` names (None: a batch or anything unreadable)."""
    try:
        seen = _decode_glance(frame)
    except (msgspec.DecodeError, RecursionError):
        env = probe(frame)  # e.g. a `_meta` that is no object: read as `probe` reads it
        if env is None:
            return None
        return env, remote_parent(env.params.meta) if env.params is not None else None
    env = Envelope(id=seen.id, method=seen.method)
    trace_meta = seen.params.meta if seen.params is not None else None
    if trace_meta is None or trace_meta.traceparent is None:
        return env, None
    found = {
        "traceparent": trace_meta.traceparent,
        "tracestate": trace_meta.tracestate,
        "baggage": trace_meta.baggage,
    }
    return env, remote_parent(found)


def remote_parent(meta: object) -> Context | None:
    """The trace context a peer put in `_meta`; None when there is none or it is
    malformed (then the span starts a trace of its own, never an error)."""
    if type(meta) is not dict or "traceparent" not in meta:
        return None
    carrier = {
        k: v for k in ("traceparent", "tracestate", "baggage") if type(v := meta.get(k)) is str
    }
    try:
        ctx = extract(carrier)
    except (ValueError, TypeError):
        return None
    if not trace.get_current_span(ctx).get_span_context().is_valid:
        return None
    return ctx


def inject_meta(frame: bytes, ctx: Context | None) -> bytes:
    """`frame` with the W3C trace context of `ctx` (None: the current one) in
    `params._meta`."""
    message = _decode_any(frame)
    if type(message) is not dict:
        return frame
    params = message.get("params")
    if params is None:
        params = message["params"] = {}
    if type(params) is not dict:
        return frame
    meta = params.get("_meta")
    if type(meta) is not dict:
        meta = params["_meta"] = {}
    inject(meta, context=ctx)
    return _encode(message)


class LinkBook:
    """Span contexts remembered by a key (an MRTR `requestState`, a task id), so a later
    message of the same logical operation links to the span that began it. Bounded:
    the oldest entries go first."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.entries: OrderedDict[str, SpanContext] = OrderedDict()

    def put(self, key: object, span: Span) -> None:
        if type(key) is str and key:
            self.entries[key] = span.get_span_context()
            if len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def links(self, env: Envelope) -> list[Link]:
        params = env.params
        if params is None or (params.request_state is None and params.task_id is None):
            return []
        return [
            Link(ctx, {"mcpgen.link": why})
            for key, why in ((params.request_state, "input_round"), (params.task_id, "task"))
            if type(key) is str and (ctx := self.entries.get(key)) is not None
        ]


class Operation:
    """One message's span and its duration measurement, from start to `end`."""

    __slots__ = (
        "attrs", "ctx", "done", "histogram", "method", "recording", "rid", "span", "started"
    )  # fmt: skip

    def __init__(
        self,
        env: Envelope,
        kind: SpanKind,
        parent: Context | None,
        links: list[Link],
        attrs: dict[str, Any],
        meter: metrics.Histogram,
    ) -> None:
        method = env.method if type(env.method) is str else ""
        self.method = method
        self.rid: str | None = None
        if env.id is not None and type(env.id) is not bool:
            self.rid = str(env.id)
        self.done = False
        self.attrs = attrs
        self.histogram: metrics.Histogram | None = meter if metering() else None
        self.ctx: Context | None
        if tracing():
            name = self._describe(env, attrs)
            self.span = tracer.start_span(name, parent, kind, attrs, links)
            self.ctx = trace.set_span_in_context(self.span, parent)
        else:
            if self.histogram is not None:
                self._describe(env, attrs)
            # Nothing records spans: only a peer's trace context is worth passing on.
            self.span = INVALID_SPAN
            self.ctx = None
            self.recording = False
            if parent is not None:
                self.span = tracer.start_span(method, parent, kind)
                self.ctx = trace.set_span_in_context(self.span, parent)
            if self.histogram is None:
                self.started = 0.0  # never read
                return
        self.recording = self.span.is_recording()
        self.started = time.perf_counter()

    def _describe(self, env: Envelope, attrs: dict[str, Any]) -> str:
        """Fill `attrs` with what the conventions ask of this message; the span name."""
        method = name = self.method
        attrs["mcp.method.name"] = method
        if self.rid is not None:
            attrs["jsonrpc.request.id"] = self.rid
        params = env.params
        if params is not None:
            target_key = TARGETS.get(method)
            if target_key is not None and type(params.name) is str:
                attrs[target_key] = params.name
                name = f"{method} {params.name}"
                if method == "tools/call":
                    attrs["gen_ai.operation.name"] = "execute_tool"
            if method in URI_METHODS and type(params.uri) is str:
                attrs["mcp.resource.uri"] = params.uri
            if method == "initialize" and type(params.protocol_version) is str:
                attrs["mcp.protocol.version"] = params.protocol_version  # as asked
            meta = params.meta
            if "mcp.protocol.version" not in attrs and type(meta) is dict:
                version = meta.get(proto.META_VERSION)
                if type(version) is str:
                    attrs["mcp.protocol.version"] = version
        return name

    def note(self, key: str, value: str) -> None:
        """An attribute learnt after the start (the version a handshake negotiated)."""
        self.attrs[key] = value
        if self.recording:
            self.span.set_attribute(key, value)

    def end_with(self, reply: Envelope | None) -> None:
        """End with the reply the peer gets (None: a notification or no answer)."""
        if reply is not None:
            error = reply.error
            if error is not None:
                code = str(error.code)
                text = error.message if type(error.message) is str else None
                self.end(code, text, code)
                return
            result = reply.result
            if result is not None and result.is_error is True:
                self.end("tool_error", None)
                return
        self.end(None, None)

    def end(self, error_type: str | None, text: str | None, status_code: str | None = None) -> None:
        if self.done:
            return
        self.done = True
        span, attrs, recording = self.span, self.attrs, self.recording
        if error_type is not None:
            attrs["error.type"] = error_type
            if recording:
                span.set_attribute("error.type", error_type)
            if status_code is not None:
                attrs["rpc.response.status_code"] = status_code
                if recording:
                    span.set_attribute("rpc.response.status_code", status_code)
            if recording:
                span.set_status(Status(StatusCode.ERROR, text))
        span.end()
        if self.histogram is None:
            return
        elapsed = time.perf_counter() - self.started
        for key in SPAN_ONLY:  # the span has its copy; what is left is the metric's
            attrs.pop(key, None)
        self.histogram.record(elapsed, attrs)

    def failed(self, exc: BaseException) -> None:
        """End with an exception that escaped (a cancellation, a transport failure)."""
        if self.recording and not self.done and not isinstance(exc, GeneratorExit):
            self.span.record_exception(exc)
        self.end(type(exc).__qualname__, str(exc) or None)
