#!/usr/bin/env bash
# The real-workload benchmark in one command (bench/workload/README.md):
#
#   bench/workload/run.sh                 # full run: 50 connections, 10 s rounds, 3 rounds
#   bench/workload/run.sh --quick         # 8 connections, 3 s rounds, 3 rounds
#   bench/workload/run.sh --help          # every option
#
# It makes (once, and again when a pin or pyproject.toml changes) the workload venv
# `.venv-workload`: this project (editable, with its `http` and `redis` extras), httpx,
# the fast stack's clients (aiohttp, hiredis) and the official SDK, so none of them
# enters the project's dev environment; then runs bench/workload/run.py in it.
# FastMCP gets its own venv (`.venv-workload-fastmcp`) because it pins its own SDK;
# the TypeScript SDK peer (legacy flow only) its npm packages in the tests' cache.
# Env: WORKLOAD_VENV, FASTMCP_VENV (where the venvs live), PYTHON (what creates them).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${WORKLOAD_VENV:-$repo/.venv-workload}"
fvenv="${FASTMCP_VENV:-$repo/.venv-workload-fastmcp}"
python="${PYTHON:-python3}"
pins="mcp==2.3.0 httpx>=0.27 aiohttp>=3.9 hiredis>=2 redis>=5"
fastmcp="fastmcp==4.2.3"

install() {  # venv stamp-text packages...
    local where="$1" want="$2"
    shift 2
    [[ -x "$where/bin/python" ]] || "$python" -m venv "$where"
    if [[ ! -f "$where/.workload-stamp" || "$(cat "$where/.workload-stamp")" != "$want" ]]; then
        echo "run.sh: installing into $where: $*" >&2
        "$where/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
        printf '%s\n' "$want" >"$where/.workload-stamp"
    fi
}

hash="$(sha256sum "$repo/pyproject.toml" | cut -d' ' -f1)"
# shellcheck disable=SC2086
install "$venv" "$pins $hash" -e "$repo[http,redis]" $pins
if [[ " $* " != *" --no-fastmcp "* ]]; then
    install "$fvenv" "$fastmcp $pins" "$fastmcp" "uvicorn>=0.30" "httptools>=0.6" "uvloop>=0.19" $pins
    export WORKLOAD_FASTMCP_PYTHON="$fvenv/bin/python"
fi
# The TypeScript SDK peer: Node >= 22 (the system's, or the one the tests cache) and
# the SDK, Express, zod and ioredis in the tests' npm cache.
if [[ " $* " != *" --no-ts "* ]]; then
    cache="${MCPGEN_TESTS_CACHE:-$HOME/.cache/mcpgen-tests}"
    node="$(command -v node || true)"
    if [[ -z "$node" || "$("$node" -p 'process.versions.node.split(".")[0]')" -lt 22 ]]; then
        node="$(ls "$cache"/node22/node_modules/node-linux-*/bin/node 2>/dev/null | head -1 || true)"
    fi
    ts_specs="@modelcontextprotocol/sdk@1.32.2 express@5 zod@3 ioredis@5"
    prefix="$cache/npm/workload-ts"
    if [[ -n "$node" ]] && command -v npm >/dev/null; then
        if [[ "$(cat "$prefix/.installed" 2>/dev/null)" != "$ts_specs" ]]; then
            echo "run.sh: installing into $prefix: $ts_specs" >&2
            # shellcheck disable=SC2086
            npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error $ts_specs
            printf '%s' "$ts_specs" >"$prefix/.installed"
        fi
        export WORKLOAD_NODE="$node" WORKLOAD_NODE_PATH="$prefix/node_modules"
    else
        echo "run.sh: no Node >= 22 or npm: the TypeScript SDK peer is left out" >&2
    fi
fi
cd "$repo"
exec "$venv/bin/python" bench/workload/run.py "$@"
