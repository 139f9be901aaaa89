"""The "A real workload" section of docs/performance.md, from run.py's results."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _chart

START = "<!-- workload:start (bench/workload/run.sh writes this section) -->"
END = "<!-- workload:end -->"
HEADING = "## A real workload"
CHART_TITLE = "Tool calls per second on the workload, per server, flow and worker count"


def _ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else "—"


def bound(results: dict[str, Any], flow: str, workers: str = "1") -> str:
    """What limited the fastest server of a flow, from the CPU shares of the run."""
    rows = {n: f[flow] for n, f in results["summary"][workers].items() if flow in f}
    name = max(rows, key=lambda n: rows[n]["calls_per_s"])
    sh, cpus = rows[name]["cpu_share"], results["machine"]["cpus"]
    total = sum(sh.values())
    head = (
        f"What bounds the fastest, {results['servers'][name]}: its server used "
        f"{sh['server']:.0%} of a core, the API stand-in {sh['api']:.0%}, Redis "
        f"{sh['redis']:.0%}, wrk {sh['wrk']:.0%}: {total:.2f} of {cpus} cores together. "
    )
    if sh["server"] >= 0.9 * int(workers):
        return head + (
            "The server's own CPU (one worker, one core) is the bound."
            if workers == "1"
            else "The server's own CPU (its workers, one core each) is the bound."
        )
    if total >= 0.9 * cpus:
        return head + "The run's processes fill the machine: they compete for its cores."
    return head + (
        "Neither the server nor the run's processes filled the machine: the rest went to "
        f"other load (load average {results['machine']['loadavg_before'][0]} before the run) "
        "or to waiting (one request in flight per connection)."
    )


PUBLISHED = {
    "source": "http4k/benchmark-mcp-servers-v2 (README, three runs)",
    "setup": "k6, 50 virtual users, 5 minutes after a 60 s warm-up, each server in a "
    "container of 2 vCPUs and 2 GB; Node: the TypeScript SDK with Express, "
    "WEB_CONCURRENCY=4; Python: FastMCP with uvloop, 4 workers",
    "rps": {"Rust (rmcp)": 4845, "Go (mcp-go)": 3616, "Node (TS SDK + Express)": 423,
            "Python (FastMCP, 4 workers)": 259},
}  # fmt: skip
PUBLISHED_BASE = "Python (FastMCP, 4 workers)"


def _socket(row: dict[str, Any]) -> str:
    """Requests wrk gave up on (a timeout, a reset): not answers that failed the check."""
    count = row.get("socket_errors", 0)
    return f" (+{count} socket errors)" if count else ""


def _flow_table(results: dict[str, Any], workers: str, flow: str) -> list[str]:
    summary, labels = results["summary"][workers], results["servers"]
    base = summary.get("official", {}).get(flow)
    lines = [
        f"**{flow} flow, {workers} worker{'s' if workers != '1' else ''}** (medians; against "
        "the official SDK; p50/p99 per HTTP request; CPU shares of the wall time: server / "
        "API stand-in / Redis / wrk)",
        "",
        "| server | tool calls/s | vs official | server CPU s per 1,000 calls "
        "| official / this | RSS MB per worker | p50 ms | p99 ms | failed answers | CPU shares |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, label in labels.items():
        row = summary.get(name, {}).get(flow)
        if row is None:
            continue
        sh = row["cpu_share"]
        shares = " / ".join(f"{sh[k]:.0%}" for k in ("server", "api", "redis", "wrk"))
        cpu_ratio = f"{base['cpu_s_per_1000'] / row['cpu_s_per_1000']:.2f}x" if base else "—"
        lines.append(
            f"| {label} | {row['calls_per_s']:,.0f} | "
            f"{_ratio(row['calls_per_s'], base and base['calls_per_s'])} | "
            f"{row['cpu_s_per_1000']:.3f} | {cpu_ratio} | {row['rss_mb']:.0f} | "
            f"{row['p50_us'] / 1000:.2f} | {row['p99_us'] / 1000:.2f} | {row['errors']} "
            f"of {row['calls']:,}{_socket(row)} | {shares} |"
        )
    return [*lines, "", bound(results, flow, workers), ""]


def published(results: dict[str, Any]) -> list[str]:
    """The published figures as multiples of their Python server, beside ours as
    multiples of FastMCP (their Python server) in the same (legacy) flow."""
    rps, base = PUBLISHED["rps"], PUBLISHED["rps"][PUBLISHED_BASE]
    lines = [
        "**Beside the published figures.** The TM Dev Lab v2 benchmark "
        f"({PUBLISHED['source']}): {PUBLISHED['setup']}. Its RPS counts `initialize`, "
        "`tools/call` and `tools/list` requests (8 per loop of 3 tool sessions and one list "
        "session), not tool calls, so only multiples compare: each server against that "
        "run's Python server, and ours against FastMCP, its Python server, in the same "
        "(legacy) flow. Another machine, other containers, another driver: read the "
        "multiples, not the absolute figures.",
        "",
        "| server | published RPS | times their Python server |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {value:,} | {value / base:.2f}x |" for name, value in rps.items()]
    summary = results["summary"]
    for workers in sorted(summary, key=int):
        fast = summary[workers].get("fastmcp", {}).get("legacy")
        if not fast:
            continue
        for name, label in results["servers"].items():
            row = summary[workers].get(name, {}).get("legacy")
            if row and name != "fastmcp":
                lines.append(
                    f"| here: {label}, {workers} worker{'s' if workers != '1' else ''} | "
                    f"{row['calls_per_s']:,.0f} tool calls/s | "
                    f"{row['calls_per_s'] / fast['calls_per_s']:.2f}x FastMCP |"
                )
    return [*lines, ""]


def instructions(results: dict[str, Any]) -> list[str]:
    counted = results.get("instructions") or {}
    if not counted:
        return []
    lines = [
        "**Instructions per unit of work** (callgrind, whole server process: interpreter, "
        "ASGI server, SDK, I/O clients; one keep-alive connection, `bench/workload/"
        "_instructions.py`; the figure does not move with the machine's load). "
        "`lifecycle`: `initialize`, `notifications/initialized` and `DELETE` (no DELETE "
        "when the server gives no session); `legacy`: the same with the tool call inside; "
        "`modern`: one stateless call.",
        "",
        "| server | lifecycle | legacy | modern |",
        "|---|---|---|---|",
    ]
    for name, row in counted.items():
        cells = " | ".join(f"{row[u] / 1e6:.2f} M" if u in row else "—" for u in
                           ("lifecycle", "legacy", "modern"))  # fmt: skip
        lines.append(f"| {results['servers'].get(name, name)} | {cells} |")
    return [*lines, ""]


def tables(results: dict[str, Any]) -> list[str]:
    s, m = results["settings"], results["machine"]
    after = m.get("loadavg_after")
    lines = [
        f"Run {results['when']} ({results.get('minutes', '?')} minutes): {m['cpus']} CPUs, "
        f"load average before the run {' / '.join(m['loadavg_before'])}"
        + (f", after the timed rounds {' / '.join(after)}" if after else "")
        + f"; {s['connections']} connections (one wrk thread each), {s['duration']:g} s per "
        f"run, {s['rounds']} interleaved rounds, {s['products']:,} products; Python "
        f"{m['python']}. Workers: mcpgen `Server.run` (1) or `mcpgen serve --workers 2 "
        "--redis` (legacy sessions shared through Redis); the official SDK and FastMCP "
        "uvicorn (`workers=2`, stateless: no session to share); the TypeScript SDK Node's "
        "cluster module. CPU is the whole server's (supervisor and workers); RSS the "
        "largest worker's.",
        "",
    ]
    if results.get("chart"):
        lines += [f"![{CHART_TITLE}]({results['chart']})", ""]
    for workers in sorted(results["summary"], key=int):
        for flow in s["flows"]:
            lines += _flow_table(results, workers, flow)
    lines += published(results)
    lines += instructions(results)
    profiles = results.get("profiles") or {}
    if profiles:
        labels = results["servers"]
        parts = sorted({p for f in profiles.values() for r in f.values() for p in r["us_per_call"]})
        lines += [
            "**Where one call's server CPU goes** (1 worker; cProfile, own time per tool call "
            "in µs, profiler overhead included: read the shares)",
            "",
            "| server | flow | " + " | ".join(parts) + " | total |",
            "|---|---|" + "---|" * (len(parts) + 1),
        ]
        for name, flows in profiles.items():
            for flow, row in flows.items():
                cells = " | ".join(f"{row['us_per_call'].get(p, 0.0):.0f}" for p in parts)
                total = row["total_us_per_call"]
                lines.append(f"| {labels[name]} | {flow} | {cells} | {total:.0f} |")
        lines.append("")
    return lines


def section(results: dict[str, Any]) -> str:
    body = [
        START,
        "",
        'The workload of the TM Dev Lab "MCP Server Performance Benchmark v2" in our own '
        "code (`bench/workload/`): three tools doing real I/O against Redis and an HTTP API of "
        "100,000 products (`search_products`, `get_user_cart`, `checkout`), driven by wrk, one "
        "connection per virtual user. The legacy flow runs a whole session per tool call "
        "(`initialize`, `notifications/initialized`, the call, `DELETE`); the modern flow is "
        "one 2026-07-28 request per call. Every answer is checked. Rerun with "
        "`bench/workload/run.sh`; the raw figures are in `bench/results/workload.json`. "
        "The [Fast I/O in tools](guide/fast-io.md) guide explains the stacks.",
        "",
        *tables(results),
        END,
    ]
    return "\n".join(body)


def write(doc: Path, results: dict[str, Any]) -> None:
    """The section into `doc`, and its chart beside it (img/workload.svg)."""
    svg = doc.parent / "img" / "workload.svg"
    svg.parent.mkdir(parents=True, exist_ok=True)
    svg.write_text(_chart.draw(results, CHART_TITLE, {**PUBLISHED, "base": PUBLISHED_BASE}))
    results = {**results, "chart": "img/workload.svg"}
    text = doc.read_text() if doc.exists() else ""
    new = section(results)
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + new + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\n{new}\n"
    doc.write_text(text)
