#!/usr/bin/env bash
# Run the codec benchmark in the benchmark virtualenv (see bench/run.sh, which owns
# the venv and the official SDK pin).
#
# Usage:  bench/run-codec.sh [--quick] [--write-doc] [--doc PATH]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MCPGEN_BENCH_LAUNCHER="${MCPGEN_BENCH_LAUNCHER:-bench/run-codec.sh}" exec "$here/run.sh" "$here/codec.py" "$@"
