#!/usr/bin/env bash
# A throwaway mcpgen cluster on this machine: a temporary redis-server, N workers of
# examples/everything.py (each `mcpgen serve ... --redis URL` on its own loopback port)
# and nginx on --port, balancing round-robin per request with no stickiness. Prints
# `ready http://127.0.0.1:P/mcp` once every worker and nginx answer; stops everything
# (and removes its temporary directory) on SIGINT or SIGTERM.
#
#   examples/cluster/run.sh --port 8080 --workers 3
#
# Options: --port P (nginx, default 8080), --workers N (default 2), --python PY (default
# $PYTHON, else the checkout's .venv, else python3), --spec SPEC (the server, default
# examples/everything.py:server). Needs redis-server and nginx (Debian packages);
# runs as any user: every file it writes lives in its temporary directory.
# --redis URL uses that Redis (any form mcpgen takes: redis+sentinel://, redis+cluster://)
# instead of starting one. --supervised runs one `mcpgen serve --workers N` on one port
# (nginx has one upstream) instead of N separate workers: `kill -HUP` on it rolls them.
#
# A protected cluster: the `mcpgen serve` authorization options go to every worker,
# e.g. --auth-issuer URL --auth-jwks-uri URL (or --auth-introspection URL
# --auth-client-id ID, the secret in MCPGEN_AUTH_CLIENT_SECRET), --auth-scope S
# (repeatable), --auth-dpop MODE; --auth-resource defaults to http://127.0.0.1:P/mcp,
# the URL clients use through nginx. DPoP proofs' jti are kept in the cluster's Redis.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
port=8080
workers=2
spec="$repo/examples/everything.py:server"
auth_args=()
redis_given=""
resource_given=""
supervised=""
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    if [[ -x "$repo/.venv/bin/python" ]]; then python="$repo/.venv/bin/python"; else python=python3; fi
fi

while (($#)); do
    case "$1" in
    --port) port="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --spec) spec="$2"; shift 2 ;;
    --redis) redis_given="$2"; shift 2 ;;
    --supervised) supervised=1; shift ;;
    --auth-resource) resource_given=1; auth_args+=("$1" "$2"); shift 2 ;;
    --auth-*) auth_args+=("$1" "$2"); shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if ! [[ "$workers" =~ ^[1-9][0-9]*$ && "$port" =~ ^[0-9]+$ ]]; then
    echo "run.sh: --workers and --port take positive numbers" >&2
    exit 2
fi
if ((${#auth_args[@]})) && [[ -z "$resource_given" ]]; then
    auth_args+=(--auth-resource "http://127.0.0.1:$port/mcp")
fi

find_tool() {
    local name="$1" dir
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
    for dir in /usr/sbin /usr/local/sbin /sbin; do
        if [[ -x "$dir/$name" ]]; then echo "$dir/$name"; return; fi
    done
    echo "run.sh: $name not found (apt-get install $2)" >&2
    exit 2
}
redis_bin="$(find_tool redis-server redis-server)"
nginx_bin="$(find_tool nginx nginx)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/mcpgen-cluster.XXXXXX")"
pids=()
worker_pids=()
nginx_pid=""
sleeper=""

stop_all() {
    trap - INT TERM EXIT
    local pid
    # nginx first (no new requests), then the workers, then Redis they still use.
    for pid in $sleeper $nginx_pid "${worker_pids[@]}" "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in $nginx_pid; do wait "$pid" 2>/dev/null || true; done
    for pid in "${worker_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$tmp"
}
on_signal() {
    stop_all
    exit 0
}
trap on_signal INT TERM
trap stop_all EXIT

# Free loopback ports: one for Redis, one per worker.
mapfile -t free < <("$python" - "$((workers + 1))" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in socks))
EOF
)
redis_port="${free[0]}"
worker_ports=("${free[@]:1}")

wait_port() {  # PORT PID WHAT: until PORT accepts connections, failing if PID exits
    local deadline=$((SECONDS + 60))
    until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
        if ! kill -0 "$2" 2>/dev/null; then
            echo "run.sh: $3 exited; its log:" >&2
            tail -n 40 "$tmp/$3.log" >&2 || true
            exit 1
        fi
        if ((SECONDS > deadline)); then echo "run.sh: $3 did not listen" >&2; exit 1; fi
        sleep 0.1
    done
}

if [[ -n "$redis_given" ]]; then
    redis_url="$redis_given"
    sleep infinity &  # (stands for the Redis this script does not run)
    pids+=($!)
else
    "$redis_bin" --port "$redis_port" --bind 127.0.0.1 --dir "$tmp" --save '' --appendonly no \
        --daemonize no --logfile "$tmp/redis.log" &
    pids+=($!)
    wait_port "$redis_port" "${pids[0]}" redis
    redis_url="redis://127.0.0.1:$redis_port/0"
fi
if [[ -z "${MCPGEN_STATE_KEYS:-}" ]]; then
    # One key for all the workers of this run (a real deployment sets its own).
    MCPGEN_STATE_KEYS="$("$python" -c 'import secrets; print(secrets.token_urlsafe(32))')"
fi
export MCPGEN_STATE_KEYS MCPGEN_REDIS_URL="$redis_url"

# Supervised: one process (its workers share its port) stands for the N workers.
procs="$workers"
many=()
if [[ -n "$supervised" ]]; then procs=1; many=(--workers "$workers"); fi
start_worker() {  # INDEX
    local wport="${worker_ports[$1]}"
    (cd "$repo" && exec "$python" -m mcpgen serve "$spec" --transport http \
        --host 127.0.0.1 --port "$wport" --redis "$redis_url" ${many[@]+"${many[@]}"} \
        ${auth_args[@]+"${auth_args[@]}"}) >>"$tmp/worker$1.log" 2>&1 &
    worker_pids[$1]=$!
}
for ((i = 0; i < procs; i++)); do start_worker "$i"; done
for ((i = 0; i < procs; i++)); do wait_port "${worker_ports[$i]}" "${worker_pids[$i]}" "worker$i"; done

upstreams=""
for wport in "${worker_ports[@]:0:procs}"; do upstreams+="        server 127.0.0.1:$wport max_fails=0;"$'\n'; done
user_line=""
if [[ "$(id -u)" == 0 ]]; then user_line="user root;"; fi  # nginx drops root to nobody otherwise
mkdir -p "$tmp/nginx-temp"
cat >"$tmp/nginx.conf" <<EOF
# Generated by examples/cluster/run.sh.
$user_line
worker_processes 1;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
events { worker_connections 4096; }
http {
    log_format upstream '\$remote_addr [\$time_local] "\$request" \$status '
                        'upstream=\$upstream_addr session=\$http_mcp_session_id';
    access_log $tmp/access.log upstream;
    client_body_temp_path $tmp/nginx-temp/body;
    proxy_temp_path $tmp/nginx-temp/proxy;
    fastcgi_temp_path $tmp/nginx-temp/fastcgi;
    uwsgi_temp_path $tmp/nginx-temp/uwsgi;
    scgi_temp_path $tmp/nginx-temp/scgi;

    # Plain round robin: any worker serves any request (state lives in Redis). No
    # upstream keepalive: a POST nginx already wrote to a dead worker's kept-alive
    # connection fails (502) rather than run twice, while a refused connection moves on
    # to the next worker, so a crashed worker costs no request that had not reached it.
    # max_fails=0: a restarted worker is used at once (a refused connect costs nothing
    # on loopback; the default would shun it for 10 s, all of them if all restarted).
    upstream mcpgen {
$upstreams    }
    server {
        listen 127.0.0.1:$port;
        client_header_timeout 10s;            # slow clients: docs/guide/limits.md
        client_body_timeout 30s;
        location / {
            proxy_pass http://mcpgen;
            proxy_http_version 1.1;            # chunked responses: SSE streams
            proxy_set_header Host \$http_host;   # the workers check Host (DNS rebinding)
            # the client's address, for the quotas of anonymous clients (docs/guide/limits.md)
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_buffering off;               # SSE events leave as they are written
            proxy_request_buffering off;
            proxy_cache off;
            proxy_read_timeout 1h;             # long-lived listen and SSE streams
            proxy_send_timeout 1h;
            # Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID and Authorization pass
            # through unchanged (nginx forwards request and response headers as they are).
        }
    }
}
EOF
"$nginx_bin" -e "$tmp/nginx-error.log" -p "$tmp" -c "$tmp/nginx.conf" -g 'daemon off;' \
    >"$tmp/nginx.log" 2>&1 &
nginx_pid=$!
wait_port "$port" "$nginx_pid" nginx

# Through nginx once per worker (round robin visits each): any answer but a gateway error.
"$python" - "http://127.0.0.1:$port/mcp" "$workers" <<'EOF'
import sys, time, urllib.error, urllib.request
url, rounds = sys.argv[1], int(sys.argv[2])
body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
deadline = time.monotonic() + 30
ok = 0
while ok < rounds:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=5):
            ok += 1
    except urllib.error.HTTPError as exc:
        ok += exc.code not in (502, 503, 504)
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("run.sh: nginx does not reach the workers")
EOF

echo "logs $tmp"
echo "ready http://127.0.0.1:$port/mcp"

# Keep serving; a worker that dies (kill -9 in the fault tests) is started again on its port.
while true; do
    sleep 1 &
    sleeper=$!
    wait "$sleeper" || true
    for ((i = 0; i < procs; i++)); do
        if ! kill -0 "${worker_pids[$i]}" 2>/dev/null; then
            status=0
            wait "${worker_pids[$i]}" 2>/dev/null || status=$?
            echo "run.sh: worker$i exited (status $status); starting it again" >&2
            start_worker "$i"
        fi
    done
    if ! kill -0 "$nginx_pid" 2>/dev/null || ! kill -0 "${pids[0]}" 2>/dev/null; then
        echo "run.sh: nginx or redis-server exited; stopping" >&2
        exit 1
    fi
done
