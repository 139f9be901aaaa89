#!/usr/bin/env bash
# Run one benchmark script in the benchmark virtualenv, so that the official MCP SDK and pydantic never enter the project's
# environment.
#
# Usage:  bench/run.sh SCRIPT [args...]     e.g.  bench/run.sh bench/dispatch.py --quick
#         (the arguments go to SCRIPT unchanged)
# Env:    BENCH_VENV   the venv to use or create (default: <repo>/.venv-bench)
#         PYTHON       the interpreter that creates it (default: python3)
#
# The venv gets this project (editable, with its `http` extra: uvicorn, httptools and
# uvloop, so every HTTP server under test runs on the same uvicorn stack) and the pinned
# official SDK, and the OpenTelemetry SDK (the recording modes of bench/_telemetry.py).
# They are (re)installed only when the pin, the extras or pyproject.toml changed since
# the last run.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
    echo "usage: bench/run.sh SCRIPT [args...]" >&2
    exit 2
fi
if [[ ! -f "$1" ]]; then
    echo "run.sh: no such script: $1" >&2
    exit 2
fi
script="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BENCH_VENV:-$repo/.venv-bench}"
python="${PYTHON:-python3}"
official_sdk="mcp==2.3.0"
otel_sdk="opentelemetry-sdk"
extras="http"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "run.sh: creating $venv" >&2
    "$python" -m venv "$venv"
fi

stamp="$venv/.mcpgen-codec-bench"
want="$official_sdk $otel_sdk [$extras] $(sha256sum "$repo/pyproject.toml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "run.sh: installing mcpgen[$extras] (editable) and $official_sdk into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$repo[$extras]" "$official_sdk" "$otel_sdk"
    printf '%s\n' "$want" >"$stamp"
fi

# The command as a user types it from the repository root, recorded by the scripts.
shown="${script#"$repo"/}"
cd "$repo"
MCPGEN_BENCH_LAUNCHER="${MCPGEN_BENCH_LAUNCHER:-bench/run.sh $shown}" \
    exec "$venv/bin/python" "$script" "$@"
