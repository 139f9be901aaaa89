#!/usr/bin/env bash
# Requests per second of a modern Streamable HTTP tools/call (uvicorn, one worker, wrk
# with 16 connections), telemetry off / on with the API's no-op providers / on with an
# SDK provider whose exporter drops spans; the modes take turns, ROUNDS times.
#   bench/telemetry_http.sh [ROUNDS] [SECONDS]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$repo/.venv/bin/python}"
rounds="${1:-3}"; secs="${2:-3}"
export MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
export MCP_HEADERS=$'Content-Type: application/json\nAccept: application/json, text/event-stream\nMCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: echo'
server='
import sys
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
from mcpgen import Server
server = Server("bench", "1.0.0", telemetry=mode != "off")
@server.tool(threaded=False)
def echo(text: str) -> str:
    return text
server.run("http", port=int(sys.argv[2]))
'
port=18931
for round in $(seq "$rounds"); do
  for mode in ${MODES:-off api sdk sampled}; do
    MCPGEN_OTEL= "$python" -c "$server" "$mode" "$port" 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.1; done
    wrk -t1 -c16 -d1s -s "$repo/bench/wrk/mcp.lua" "http://127.0.0.1:$port/mcp" >/dev/null  # warm-up
    rps=$(wrk -t1 -c16 -d"${secs}s" -s "$repo/bench/wrk/mcp.lua" "http://127.0.0.1:$port/mcp" | awk '/Requests\/sec/ {print $2}')
    echo "round $round $mode $rps"
    kill "$pid"; wait "$pid" 2>/dev/null || true
    port=$((port + 1))
  done
done
