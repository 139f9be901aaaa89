#!/usr/bin/env bash
# Modern tools/call throughput through nginx (examples/cluster/run.sh) with 1, 2, ...
# workers: one bounded wrk run per worker count (after a one-second warm-up), printed
# as a Markdown table row each.
#
#   bench/cluster.sh [--workers "1 2"] [--seconds 10] [--connections 16]
#
# Needs wrk, redis-server and nginx. Each worker count gets a fresh cluster.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
counts="1 2"
seconds=10
connections=16
python="${PYTHON:-$repo/.venv/bin/python}"
while (($#)); do
    case "$1" in
    --workers) counts="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
export MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"wrk"},'"$meta"'}}'
export MCP_HEADERS=$'Content-Type: application/json\nAccept: application/json, text/event-stream\nMCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: greet'

cluster=""
out=""
cleanup() {
    if [[ -n "$cluster" ]]; then kill -TERM "$cluster" 2>/dev/null || true; wait "$cluster" 2>/dev/null || true; fi
    if [[ -n "$out" ]]; then rm -f "$out"; fi
}
trap cleanup EXIT

echo "| workers | connections | requests/s | p50 | p99 | non-2xx or socket errors |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in $counts; do
    port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    out="$(mktemp)"
    "$repo/examples/cluster/run.sh" --port "$port" --workers "$n" --python "$python" >"$out" 2>&1 &
    cluster=$!
    until grep -q '^ready ' "$out"; do
        if ! kill -0 "$cluster" 2>/dev/null; then cat "$out" >&2; exit 1; fi
        sleep 0.2
    done
    url="http://127.0.0.1:$port/mcp"
    wrk -t1 -c"$connections" -d1s -s "$repo/bench/wrk/mcp.lua" "$url" >/dev/null
    line="$(wrk -t1 -c"$connections" -d"${seconds}s" -s "$repo/bench/wrk/mcp.lua" "$url" | sed -n 's/^mcp-wrk-result //p')"
    "$python" - "$n" "$connections" "$line" <<'EOF'
import json, sys
n, connections, r = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
errors = sum(r[k] for k in ("connect", "read", "write", "status", "timeout"))
rate = r["requests"] / (r["duration_us"] / 1e6)
print(f"| {n} | {connections} | {rate:,.0f} | {r['p50_us'] / 1000:.2f} ms | {r['p99_us'] / 1000:.2f} ms | {errors} |")
EOF
    kill -TERM "$cluster"
    wait "$cluster" || true
    cluster=""
    rm -f "$out"
    out=""
done
