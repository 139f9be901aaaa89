#!/usr/bin/env bash
# Run the codec benchmark (bench/codec.py) in a virtualenv of its own, so that the
# official MCP SDK and pydantic never enter the project's environment.
#
# Usage:  bench/run-codec.sh [--quick] [--write-doc] [--doc PATH]
#         (arguments go to bench/codec.py unchanged)
# Env:    BENCH_VENV   the venv to use or create (default: <repo>/.venv-bench)
#         PYTHON       the interpreter that creates it (default: python3)
#
# The venv gets this project (editable) and the pinned official SDK. Both are
# (re)installed only when the pin or pyproject.toml changed since the last run.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BENCH_VENV:-$repo/.venv-bench}"
python="${PYTHON:-python3}"
official_sdk="mcp==2.3.0"

if [[ ! -x "$venv/bin/python" ]]; then
    echo "run-codec.sh: creating $venv" >&2
    "$python" -m venv "$venv"
fi

stamp="$venv/.mcpgen-codec-bench"
want="$official_sdk $(sha256sum "$repo/pyproject.toml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "run-codec.sh: installing mcpgen (editable) and $official_sdk into $venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -e "$repo" "$official_sdk"
    printf '%s\n' "$want" >"$stamp"
fi

cd "$repo"
MCPGEN_BENCH_LAUNCHER="bench/run-codec.sh" exec "$venv/bin/python" bench/codec.py "$@"
