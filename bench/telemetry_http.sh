#!/usr/bin/env bash
# Requests per second of a modern Streamable HTTP tools/call (uvicorn, one worker, wrk
# with 16 connections) per server and telemetry mode of bench/_telemetry.py: off / on
# with the API's no-op providers / on with an SDK provider whose exporter drops spans
# (`traces`: no meter provider; `sdk`: with one; `sampled`, `traces-sampled`: 1%). Every server and mode
# takes its turn in each of ROUNDS rounds, so a ratio to `off` pairs runs of one round.
#   bench/telemetry_http.sh [ROUNDS] [SECONDS]
#   SERVERS="mcpgen official" MODES="off api sdk" bench/telemetry_http.sh 5 3
# The servers run in the benchmark venv (bench/run.sh makes it; the official SDK and
# the OpenTelemetry SDK are there); PYTHON overrides the interpreter.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}"; secs="${2:-3}"
if [[ -z "${PYTHON:-}" ]]; then
  # run.sh makes (or updates) the venv; the server it starts only prints its usage
  "$repo/bench/run.sh" "$repo/bench/_telemetry.py" >/dev/null 2>&1 || true
  PYTHON="${BENCH_VENV:-$repo/.venv-bench}/bin/python"
fi
export MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
export MCP_HEADERS=$'Content-Type: application/json\nAccept: application/json, text/event-stream\nMCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: echo'
port=18931
for round in $(seq "$rounds"); do
  for server in ${SERVERS:-mcpgen}; do
    for mode in ${MODES:-off api sdk sampled}; do
      MCPGEN_OTEL= "$PYTHON" "$repo/bench/_telemetry.py" "$server" "$mode" "$port" 2>/dev/null &
      pid=$!
      for _ in $(seq 300); do curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.1; done
      wrk -t1 -c16 -d1s -s "$repo/bench/wrk/mcp.lua" "http://127.0.0.1:$port/mcp" >/dev/null  # warm-up
      out=$(wrk -t1 -c16 -d"${secs}s" -s "$repo/bench/wrk/mcp.lua" "http://127.0.0.1:$port/mcp")
      rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
      bad=$(awk '/Non-2xx|Socket errors/' <<<"$out")
      echo "round $round $server $mode $rps${bad:+ (errors: $bad)}"
      kill "$pid"; wait "$pid" 2>/dev/null || true
      port=$((port + 1))
    done
  done
done
