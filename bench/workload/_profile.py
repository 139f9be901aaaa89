"""cProfile of the mcpgen servers under the workload: one process per stack and flow,
run under wrk for a while, stopped, its statistics split into parts by where each
function lives. Times are per tool call (cProfile's own overhead included, so the
shares matter more than the absolute figures)."""

from __future__ import annotations

import argparse
import os
import pstats
import signal
import tempfile
from pathlib import Path
from typing import Any

PARTS = (
    ("mcpgen", ("/mcpgen/",)),
    ("tool code", ("/bench/workload/servers/",)),
    ("ASGI server", ("/uvicorn/", "/httptools/", "httptools")),
    (
        "HTTP client",
        (
            "/httpx/",
            "/httpcore/",
            "/h11/",
            "/anyio/",
            "/aiohttp/",
            "/yarl/",
            "/multidict/",
            "aiohttp",
            "multidict",
            "yarl",
        ),
    ),
    ("Redis client", ("/redis/", "hiredis")),
    ("JSON", ("/json/", "msgspec", "_json")),
    ("imports", ("importlib",)),
    ("event loop", ("/asyncio/", "uvloop", "/selectors.py", "/contextvars")),
)


def part_of(filename: str, function: str) -> str:
    where = filename if filename != "~" else function
    for part, needles in PARTS:
        if any(needle in where for needle in needles):
            return part
    return "other"


def split(path: Path) -> tuple[dict[str, float], list[tuple[str, float]]]:
    """Seconds of CPU (own time, not cumulative) by part, and the costliest functions
    counted as "other"."""
    stats: Any = pstats.Stats(str(path)).stats
    out: dict[str, float] = {}
    other: list[tuple[str, float]] = []
    for (filename, line, function), (_, _, own, _, _) in stats.items():
        part = part_of(filename, function)
        out[part] = out.get(part, 0.0) + own
        if part == "other":
            other.append((f"{filename}:{line}({function})", own))
    return out, sorted(other, key=lambda item: -item[1])[:8]


def profiles(stack: Any, chosen: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    import run as runner  # noqa: PLC0415

    out: dict[str, Any] = {}
    for spec in chosen:
        if not spec.name.startswith("mcpgen"):
            continue
        for flow in args.flows:
            with tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / "server.prof"
                port = runner.start_server(stack, spec, {"WORKLOAD_PROFILE": str(target)})
                runner.wrk(port, flow, min(2, args.connections), 1, args.products)  # warm-up
                os.kill(stack.pids[spec.name], signal.SIGUSR1)
                result, _ = runner.wrk(port, flow, args.connections, args.duration, args.products)
                stack.stop(spec.name)
                parts, other = split(target)
            calls = max(result["calls"], 1)
            per_call = {k: v / calls * 1e6 for k, v in sorted(parts.items())}
            out.setdefault(spec.name, {})[flow] = {
                "calls": result["calls"],
                "errors": result["errors"],
                "us_per_call": per_call,
                "total_us_per_call": sum(per_call.values()),
                "other_top_us": [(where, own / calls * 1e6) for where, own in other],
            }
    return out
