#!/usr/bin/env bash
# The real-workload benchmark in one command (bench/workload/README.md):
#
#   bench/workload/run.sh                 # full run: 50 connections, 8 s runs, 3 rounds,
#                                         # 1 and 2 workers (about 11 minutes)
#   bench/workload/run.sh --quick         # a smoke run: 8 connections, 2 s runs, 1 round
#   bench/workload/run.sh --help          # every option
#
# It makes (once, and again when a pin or pyproject.toml changes) the workload venvs,
# so that none of them enters the project's dev environment and no server carries
# another's packages (the RSS of each is what its own install costs):
# `.venv-workload`: this project (editable, with its `http`, `redis` and `client`
# extras: `mcpgen serve --workers`), httpx and the fast stack's clients (aiohttp,
# hiredis); `.venv-workload-official`: the official SDK 2.3 and the same clients;
# `.venv-workload-fastmcp`: FastMCP 4.2.3 (it pins its own SDK); the TypeScript SDK
# peer its npm packages in the tests' cache. Then runs bench/workload/run.py.
# Env: WORKLOAD_VENV, OFFICIAL_VENV, FASTMCP_VENV (where the venvs live), PYTHON.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${WORKLOAD_VENV:-$repo/.venv-workload}"
ovenv="${OFFICIAL_VENV:-$repo/.venv-workload-official}"
fvenv="${FASTMCP_VENV:-$repo/.venv-workload-fastmcp}"
python="${PYTHON:-python3}"
# One redis-py for every server: 5.2.1, the lightest and cheapest per command of the
# versions measured (docs/guide/fast-io.md: 7.x and 8.x spend more CPU per command and
# load more modules); every server's tools use the same client, so none gains by it.
pins="httpx>=0.27 aiohttp>=3.9 hiredis>=2 redis==5.2.1"
official="mcp==2.3.0"
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
install "$venv" "$pins $hash" -e "$repo[http,redis,client]" $pins
install "$ovenv" "$official $pins" "$official" $pins
export WORKLOAD_OFFICIAL_PYTHON="$ovenv/bin/python"
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
