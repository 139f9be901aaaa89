"""Instructions per stdio tools/call with telemetry off and on (callgrind), the way
bench/suite.py counts them: the server runs under valgrind with instrumentation off,
a warm-up, then two dumped segments of N1 and N2 calls: per call = (I2 - I1) / (N2 - N1).

    .venv/bin/python bench/telemetry_cost.py [--tree DIR] [--mode off|api|sdk] [--n1 --n2]

`--tree DIR`: serve from another checkout's runtime (e.g. /work/main, for "before").
`--http`: the same over Streamable HTTP (uvicorn, one keep-alive connection).
`--mode api`: telemetry=True with no SDK configured (the API's no-op providers);
`--mode bare-sdk`: no mcpgen at all, only what the SDK costs per span and record;
`--mode sampled`: as `sdk`, with ParentBased(TraceIdRatioBased(0.01)) as the sampler;
`--mode sdk`: telemetry=True with an SDK tracer provider whose exporter drops every
span and a meter provider with an in-memory reader (the cost of recording, not of
exporting).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = """
import sys
from mcpgen import Server
mode = sys.argv[1]
if mode in ("sdk", "sampled"):
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased
    sampler = ParentBased(TraceIdRatioBased(0.01)) if mode == "sampled" else ALWAYS_ON
    provider = TracerProvider(sampler=sampler)
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
server = Server("bench", "1.0.0", **({"telemetry": True} if mode != "off" else {}))

@server.tool(threaded=False)
def echo(text: str) -> str:
    return text

if len(sys.argv) > 2:
    server.run("http", port=int(sys.argv[2]))
else:
    server.run()
"""
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
TOTALS = re.compile(rb"^totals:\s+(\d+)", re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http_calls(port: int, body: bytes) -> Callable[[int], None]:
    """POSTs of `body` on one keep-alive connection, once the server listens."""
    deadline = time.monotonic() + 300
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }

    def calls(n: int) -> None:
        for _ in range(n):
            conn.request("POST", "/mcp", body.strip(), headers)
            reply = conn.getresponse().read()
            assert b'"hello"' in reply, reply

    return calls


def control(*args: str) -> None:
    done = subprocess.run(["callgrind_control", *args], capture_output=True, text=True, check=False)
    if "OK" not in done.stdout:
        raise SystemExit(f"callgrind_control {args}: {done.stdout}{done.stderr}")


def measure(
    tree: Path | None, mode: str, n1: int, n2: int, warmup: int, http: bool
) -> tuple[float, float]:
    work = Path(tempfile.mkdtemp(prefix="otel-cost-"))
    script = work / "server.py"
    script.write_text(SERVER)
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("MCPGEN_OTEL", None)
    if tree is not None:
        env["PYTHONPATH"] = f"{tree / 'runtime'}:{tree / 'generated'}"
    out = work / "callgrind.%p"
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    port = _free_port() if http else 0
    proc = subprocess.Popen(
        [*argv, sys.executable, str(script), mode, *([str(port)] if http else [])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    request["params"] = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
    line = json.dumps(request, separators=(",", ":")).encode() + b"\n"

    def calls(n: int) -> None:
        for _ in range(n):
            proc.stdin.write(line)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            reply = proc.stdout.readline()  # type: ignore[union-attr]
            assert b'"hello"' in reply, reply

    if http:
        calls = _http_calls(port, line)

    calls(warmup)
    control("--instr=on", str(proc.pid))
    calls(n1)
    control("--dump", str(proc.pid))
    calls(n2)
    control("--dump", str(proc.pid))
    proc.stdin.close()
    if http:
        proc.terminate()
    proc.wait(300)
    totals = []
    for part in (1, 2):
        found = TOTALS.search(Path(str(out).replace("%p", str(proc.pid)) + f".{part}").read_bytes())
        assert found is not None
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / (n2 - n1), totals[1] / n2


BARE = """
import sys
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class Drop(SpanExporter):
    def export(self, spans):
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(Drop()))
trace.set_tracer_provider(provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
tracer = trace.get_tracer("bare")
histogram = metrics.get_meter("bare").create_histogram("d", unit="s")
kind = trace.SpanKind.SERVER
for _ in range(int(sys.argv[1])):
    attrs = {"mcp.method.name": "tools/call", "jsonrpc.request.id": "1",
             "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
             "mcp.protocol.version": "2026-07-28"}
    span = tracer.start_span("tools/call echo", None, kind, attrs)
    span.end()
    del attrs["jsonrpc.request.id"]
    histogram.record(0.001, attrs)
"""


def bare(n1: int, n2: int) -> float:
    """What the OpenTelemetry SDK alone costs per span + histogram record (no mcpgen):
    whole-process counts of two runs, (I2 - I1) / (N2 - N1)."""
    work = Path(tempfile.mkdtemp(prefix="otel-cost-"))
    script = work / "bare.py"
    script.write_text(BARE)
    totals = []
    for n in (n1, n2):
        out = work / f"callgrind.{n}"
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        subprocess.run(
            [*argv, sys.executable, str(script), str(n)], check=True, capture_output=True
        )
        found = TOTALS.search(out.read_bytes())
        assert found is not None
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / (n2 - n1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path)
    modes = ["off", "api", "sdk", "sampled", "bare-sdk"]
    parser.add_argument("--mode", choices=modes, default="off")
    parser.add_argument("--http", action="store_true", help="Streamable HTTP, not stdio")
    parser.add_argument("--n1", type=int, default=500)
    parser.add_argument("--n2", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=300)
    args = parser.parse_args()
    started = time.monotonic()
    if args.mode == "bare-sdk":
        print(f"the SDK alone: {bare(args.n1, args.n2):,.0f} Ir per span + histogram record")
        return
    per_call, check = measure(args.tree, args.mode, args.n1, args.n2, args.warmup, args.http)
    where = args.tree or "this checkout"
    print(
        f"{where} {'http' if args.http else 'stdio'} telemetry {args.mode}: "
        f"{per_call:,.0f} Ir per call "
        f"(check {check:,.0f}; {time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
