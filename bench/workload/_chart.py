"""The workload's chart, an SVG written by hand (no plotting library in the workload
venv): horizontal bars of tool calls/s per server, one bar per (flow, worker count);
below them the published cross-language figures as multiples of their Python server,
beside ours as multiples of FastMCP. Deterministic: the same results draw the same bytes."""

from __future__ import annotations

from html import escape
from typing import Any

COLOURS = {
    ("legacy", "1"): "#1f77b4",
    ("legacy", "2"): "#9ecae1",
    ("modern", "1"): "#d62728",
    ("modern", "2"): "#fc9272",
}
WIDTH, LABEL_W, BAR_H, GAP = 860, 300, 13, 10
PLOT_W = WIDTH - LABEL_W - 90


def _text(x: float, y: float, body: str, size: int = 12, anchor: str = "start") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-family="sans-serif">{escape(body)}</text>'
    )


def _bar(x: float, y: float, w: float, colour: str) -> str:
    width = max(w, 0.5)
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{BAR_H}" fill="{colour}"/>'


def _throughput(results: dict[str, Any], top: float) -> tuple[list[str], float]:
    summary = results["summary"]
    keys = [(f, w) for w in sorted(summary, key=int) for f in results["settings"]["flows"]]
    peak = max(
        (r["calls_per_s"] for w in summary.values() for s in w.values() for r in s.values()),
        default=1.0,
    )
    out = [_text(10, top + 14, "Tool calls per second (medians; more is better)", 14)]
    y = top + 30
    for k, (flow, workers) in enumerate(keys):  # the legend
        x = LABEL_W + k * 130
        out.append(_bar(x, y, 12, COLOURS.get((flow, workers), "#888")))
        out.append(_text(x + 16, y + 11, f"{flow}, {workers} worker{'s' * (workers != '1')}", 11))
    y += 26
    for name, label in results["servers"].items():
        rows = [(k, summary[k[1]].get(name, {}).get(k[0])) for k in keys]
        rows = [(k, r) for k, r in rows if r]
        if not rows:
            continue
        out.append(_text(LABEL_W - 8, y + BAR_H * len(rows) / 2 + 4, label, 12, "end"))
        for (flow, workers), row in rows:
            w = row["calls_per_s"] / peak * PLOT_W
            out.append(_bar(LABEL_W, y, w, COLOURS.get((flow, workers), "#888")))
            out.append(_text(LABEL_W + w + 4, y + BAR_H - 2, f"{row['calls_per_s']:,.0f}", 10))
            y += BAR_H + 1
        y += GAP
    return out, y


def _multiples(
    results: dict[str, Any], top: float, published: dict[str, Any]
) -> tuple[list[str], float]:
    rps = published["rps"]
    base = rps[published["base"]]
    bars = [(f"{name} (published)", value / base, "#7f7f7f") for name, value in rps.items()]
    for workers in sorted(results["summary"], key=int):
        rows = results["summary"][workers]
        fast = rows.get("fastmcp", {}).get("legacy")
        for name in ("mcpgen-fast", "mcpgen-httpx"):
            row = rows.get(name, {}).get("legacy")
            if fast and row:
                label = f"{results['servers'][name]}, {workers}w (here)"
                bars.append((label, row["calls_per_s"] / fast["calls_per_s"], "#1f77b4"))
    if len(bars) == len(rps):
        return [], top
    peak = max(v for _, v, _ in bars)
    out = [
        _text(
            10,
            top + 14,
            "Times the Python server (FastMCP), legacy flow: "
            "published run (another machine) and this run",
            14,
        )
    ]
    y = top + 30
    for label, value, colour in bars:
        w = value / peak * PLOT_W
        out.append(_text(LABEL_W - 8, y + BAR_H - 2, label, 12, "end"))
        out.append(_bar(LABEL_W, y, w, colour))
        out.append(_text(LABEL_W + w + 4, y + BAR_H - 2, f"{value:.2f}x", 10))
        y += BAR_H + 6
    return out, y


def draw(results: dict[str, Any], title: str, published: dict[str, Any] | None = None) -> str:
    body, y = _throughput(results, 30)
    if published:
        more, y = _multiples(results, y + 10, published)
        body += more
    height = int(y + 20)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}">'
    )
    parts = [
        head,
        f"<title>{escape(title)}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        _text(10, 20, title, 15),
        *body,
        "</svg>",
    ]
    return "\n".join(parts) + "\n"
