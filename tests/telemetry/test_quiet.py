"""Telemetry on with nothing that records (the API's no-op providers): no span is
started, no attribute computed, no reply decoded, yet the log context and a peer's
trace context still reach the handler. Each case runs in a fresh interpreter, because
the test process has an SDK provider set once for all the other tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(script: str) -> None:
    """Run `script` in a fresh interpreter; it prints "ok" when its checks pass."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


QUIET = """
import json, logging
from opentelemetry import trace
from mcpgen import Server
from mcpgen.telemetry import _common

calls = []
def refuse(*args, **kwargs):
    raise AssertionError("started a span with nothing to record it")

def described(self, env, attrs):
    calls.append("describe")
    return original(self, env, attrs)

original = _common.Operation._describe
_common.Operation._describe = described
seen = []

class Keep(logging.Handler):
    def emit(self, record):
        seen.append((record.mcp_method, record.mcp_request_id))

log = logging.getLogger("mcpgen.server")
log.addHandler(Keep())
log.setLevel(logging.INFO)
server = Server("quiet", telemetry=True)

@server.tool(threaded=False)
def echo(text: str) -> str:
    log.info("echo")
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else text

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

class Sink:
    headers = principal = auth = None
    def notify(self, frame):
        pass
    request = reply = notify

def call(rid, meta):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}, **meta}
    params = {"name": "echo", "arguments": {"text": "x"}, "_meta": meta}
    frame = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.loads(server.session().receive(json.dumps(frame).encode(), Sink()))

real = _common.tracer.start_span
_common.tracer.start_span = refuse
assert call(1, {})["result"]["content"][0]["text"] == "x"
_common.tracer.start_span = real
# A peer's trace context still reaches the handler (and what it calls in turn).
assert call(2, {"traceparent": PARENT})["result"]["content"][0]["text"] == PARENT[3:35]
assert calls == [], calls
assert seen == [("tools/call", "1"), ("tools/call", "2")], seen
print("ok")
"""


def test_nothing_is_computed_when_nothing_records() -> None:
    _run(QUIET)


SAMPLED_OUT = """
import json
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import NonRecordingSpan
from mcpgen import Server

def refuse(*args, **kwargs):
    raise AssertionError("wrote to a span that records nothing")

NonRecordingSpan.set_attribute = refuse
NonRecordingSpan.set_status = refuse
trace.set_tracer_provider(TracerProvider(sampler=ALWAYS_OFF))
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
server = Server("sampled-out", telemetry=True)

@server.tool(threaded=False)
def boom(text: str) -> str:
    raise ValueError("no")

class Sink:
    headers = principal = auth = None
    def notify(self, frame):
        pass
    request = reply = notify

meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}
params = {"name": "boom", "arguments": {"text": "x"}, "_meta": meta}
frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
reply = json.loads(server.session().receive(json.dumps(frame).encode(), Sink()))
assert reply["result"]["isError"] is True, reply
# The histogram is recorded whatever the sampler decided, with the error type.
points = [
    point
    for resource in reader.get_metrics_data().resource_metrics
    for scope in resource.scope_metrics
    for metric in scope.metrics
    if metric.name == "mcp.server.operation.duration"
    for point in metric.data.data_points
]
assert [dict(p.attributes)["error.type"] for p in points] == ["tool_error"], points
assert dict(points[0].attributes)["gen_ai.tool.name"] == "boom"
print("ok")
"""


def test_a_sampled_out_span_is_not_written_but_the_histogram_is() -> None:
    _run(SAMPLED_OUT)


CLIENT_QUIET = """
import asyncio
from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from mcpgen import Client, Server
from mcpgen.telemetry import _calling
from mcpgen_types import latest as t
from tests.telemetry.app import build

def refuse(*args, **kwargs):
    raise AssertionError("read a frame with nothing to record and nothing to pass on")

async def accept(params):
    return t.ElicitResult(action="accept", content={"sure": True})

server = Server("quiet")

@server.tool(threaded=False)
def trace_id() -> str:
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else "none"

async def main():
    real = _calling.probe, _calling.inject_meta, _calling.Envelope
    _calling.probe = _calling.inject_meta = _calling.Envelope = refuse
    # A legacy session: its handshake sends a notification, and the server asks the
    # client for input (a request the client receives).
    async with Client.memory(server, telemetry=True, era="legacy") as client:
        assert (await client.call_tool("trace_id", {})).content[0].text == "none"
    async with Client.memory(build(), telemetry=True, era="legacy", on_elicitation=accept) as c:
        assert (await c.call_tool("confirm", {"action": "ship"})).content[0].text == "accept:ship"
    _calling.probe, _calling.inject_meta, _calling.Envelope = real
    async with Client.memory(server, telemetry=True) as client:
        # A context current in the application (e.g. taken from an incoming HTTP
        # request by other instrumentation) still travels to the server.
        remote = SpanContext(0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331, True,
                             TraceFlags(1))
        token = context.attach(trace.set_span_in_context(NonRecordingSpan(remote)))
        try:
            text = (await client.call_tool("trace_id", {})).content[0].text
        finally:
            context.detach(token)
        assert text == "0af7651916cd43dd8448eb211c80319c", text
    print("ok")

asyncio.run(main())
"""


def test_a_client_with_nothing_to_record_sends_frames_untouched() -> None:
    _run(CLIENT_QUIET)
