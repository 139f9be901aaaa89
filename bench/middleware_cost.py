"""Instructions per stdio (or HTTP) tools/call with no middleware, one pass-through
middleware, and each built-in policy, counted as `bench/telemetry_cost.py` counts them
(callgrind, instrumentation off during start-up and warm-up, two dumped segments).

    .venv/bin/python bench/middleware_cost.py [--tree DIR] [--http] [MODE ...]

`--tree DIR`: the runtime of another checkout (e.g. /work/main, for "before"; only the
mode `none` exists there). The modes are those of `bench/_middleware.py`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import _middleware
from telemetry_cost import HERE, measure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--n1", type=int, default=500)
    parser.add_argument("--n2", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("modes", nargs="*", default=["none", "passthrough"])
    args = parser.parse_args()
    script = HERE / "_middleware.py"
    base = None
    for mode in args.modes:
        if mode not in _middleware.MODES:
            raise SystemExit(f"unknown mode {mode!r}: {_middleware.MODES}")
        per_call, _ = measure(
            "mcpgen", args.tree, mode, args.n1, args.n2, args.warmup, args.http, script
        )
        base = per_call if base is None else base
        where = args.tree or "this checkout"
        print(
            f"{mode:<18} {per_call:>10,.0f} Ir per call  {per_call / base - 1:+.1%}  ({where}, "
            f"{'http' if args.http else 'stdio'})"
        )


if __name__ == "__main__":
    main()
