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
# FastMCP gets its own venv (`.venv-workload-fastmcp`) because it pins its own SDK.
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
cd "$repo"
exec "$venv/bin/python" bench/workload/run.py "$@"
