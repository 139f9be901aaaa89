"""The "A real workload" section of docs/performance.md, from run.py's results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

START = "<!-- workload:start (bench/workload/run.sh writes this section) -->"
END = "<!-- workload:end -->"
HEADING = "## A real workload"


def _ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else "—"


def bound(results: dict[str, Any], flow: str) -> str:
    """What limited the fastest server of a flow, from the CPU shares of the run."""
    rows = {n: f[flow] for n, f in results["summary"].items() if flow in f}
    name = max(rows, key=lambda n: rows[n]["calls_per_s"])
    sh, cpus = rows[name]["cpu_share"], results["machine"]["cpus"]
    total = sum(sh.values())
    head = (
        f"What bounds the fastest, {results['servers'][name]}: its server used "
        f"{sh['server']:.0%} of a core, the API stand-in {sh['api']:.0%}, Redis "
        f"{sh['redis']:.0%}, wrk {sh['wrk']:.0%}: {total:.2f} of {cpus} cores together. "
    )
    if sh["server"] >= 0.9:
        return head + "The server's own CPU (one worker, one core) is the bound."
    if total >= 0.9 * cpus:
        return head + "The run's processes fill the machine: they compete for its cores."
    return head + (
        "Neither the server nor the run's processes filled the machine: the rest went to "
        f"other load (load average {results['machine']['loadavg_before'][0]} before the run) "
        "or to waiting (one request in flight per connection)."
    )


def tables(results: dict[str, Any]) -> list[str]:
    summary, labels = results["summary"], results["servers"]
    s, m = results["settings"], results["machine"]
    lines = [
        f"Run {results['when']}: {m['cpus']} CPUs, load average before the run "
        f"{' / '.join(m['loadavg_before'])}; {s['connections']} connections (one wrk thread "
        f"each), {s['duration']:g} s per run, {s['rounds']} interleaved rounds, "
        f"{s['products']:,} products; one uvicorn worker per server; Python {m['python']}.",
        "",
    ]
    for flow in s["flows"]:
        base = summary.get("official", {}).get(flow)
        lines += [
            f"**{flow} flow** (medians; ratios against the official SDK; p50/p99 per HTTP "
            "request; CPU shares of the wall time: server / API stand-in / Redis / wrk)",
            "",
            "| server | tool calls/s | vs official | server CPU s per 1,000 calls "
            "| official / this | RSS MB | p50 ms | p99 ms | errors | CPU shares |",
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
                f"of {row['calls']:,} | {shares} |"
            )
        lines += ["", bound(results, flow), ""]
    profiles = results.get("profiles") or {}
    if profiles:
        parts = sorted({p for f in profiles.values() for r in f.values() for p in r["us_per_call"]})
        lines += [
            "**Where one call's server CPU goes** (cProfile, own time per tool call in µs, "
            "profiler overhead included: read the shares)",
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
    text = doc.read_text() if doc.exists() else ""
    new = section(results)
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + new + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\n{new}\n"
    doc.write_text(text)
