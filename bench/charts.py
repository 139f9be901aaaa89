"""Bar charts of the benchmark ratios, for docs/performance.md.

    python bench/charts.py            # bench/results/performance.json -> docs/img/perf-*.svg
    python bench/charts.py --from-doc # first re-read the figures from docs/performance.md
    python bench/charts.py --check    # exit 1 when the JSON or a chart is stale

The benchmark scripts publish their figures as Markdown tables in their own section of
docs/performance.md (`bench/_common.write_section`). Each time a script rewrites its
section, `write_section` calls `refresh` here, which reads every ratio column of every
table back into bench/results/performance.json, the machine-readable copy of the
published figures, and redraws the charts from it (when matplotlib is there; the
benchmark virtualenv may not have it, and then the next `python bench/charts.py` from
the dev install does). The JSON was first filled from the figures published on
2026-11-30 and 2026-12-01.

A ratio column is one whose header says "ratio" (not "paired") or starts with
"mcpgen vs": a cell such as `27.0x (paired 27.0x, 24.0-27.2)` or `2.53x less` counts
as its leading number. One chart per table that has such columns, a bar per row and
per column; bars are "times better for mcpgen", so higher is better throughout.

The SVGs are deterministic (fixed hash salt, no date, text kept as text), so the test
suite regenerates them from the committed JSON and compares bytes
(tests/docs/test_charts.py). matplotlib is pinned in the docs extra for that reason.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "performance.md"
RESULTS = REPO / "bench" / "results" / "performance.json"
IMG = REPO / "docs" / "img"

SECTION = re.compile(r"<!-- (?P<name>[\w-]+):start -->\n(?P<body>.*?)<!-- (?P=name):end -->", re.S)
NUMBER = re.compile(r"^\s*\**(?P<value>\d[\d,]*(?:\.\d+)?)x\b")


def _is_ratio(header: str) -> bool:
    lowered = header.lower()
    return ("ratio" in lowered and "paired" not in lowered) or lowered.startswith("mcpgen vs")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _value(cell: str) -> float | None:
    found = NUMBER.match(cell.replace("**", ""))
    return float(found["value"].replace(",", "")) if found else None


def _tables(body: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(the heading above, header cells, rows) of every Markdown table in `body`."""
    tables: list[tuple[str, list[str], list[list[str]]]] = []
    heading = ""
    lines = body.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        is_table = line.startswith("|") and index + 1 < len(lines)
        if is_table and re.fullmatch(r"\|[\s:|-]+\|?", lines[index + 1].strip()):
            header = _cells(line)
            rows = []
            index += 2
            while index < len(lines) and lines[index].startswith("|"):
                rows.append(_cells(lines[index]))
                index += 1
            tables.append((heading, header, rows))
            continue
        index += 1
    return tables


def extract(doc: str) -> dict[str, Any]:
    """Every ratio column of every table of every benchmark section of the page."""
    charts: list[dict[str, Any]] = []
    for section in SECTION.finditer(doc):
        title = next(
            (line[3:].strip() for line in section["body"].splitlines() if line.startswith("## ")),
            section["name"],
        )
        numbered = 0
        for heading, header, rows in _tables(section["body"]):
            columns = [i for i, name in enumerate(header) if _is_ratio(name)]
            if not columns:
                continue
            era = header.index("era") if "era" in header else None
            bars = []
            for row in rows:
                label = row[0] if era is None else f"{row[0]}, {row[era]}"
                values = [_value(row[i]) if i < len(row) else None for i in columns]
                if any(value is not None for value in values):
                    bars.append({"label": label.replace("`", ""), "values": values})
            if not bars:
                continue
            numbered += 1
            charts.append(
                {
                    "id": f"{section['name']}-{numbered}",
                    "section": section["name"],
                    "title": title.replace("`", ""),
                    "table": heading.replace("`", "") if heading != title else "",
                    "series": [header[i] for i in columns],
                    "bars": bars,
                }
            )
    return {
        "source": "docs/performance.md",
        "written_by": "bench/charts.py (called by bench/_common.write_section)",
        "charts": charts,
    }


def results_text(results: dict[str, Any]) -> str:
    return json.dumps(results, indent=1, ensure_ascii=False) + "\n"


def draw(chart: dict[str, Any]) -> str:
    """One chart as SVG text: horizontal bars, one group per row, one bar per series."""
    # Imported here: extracting the figures (what a benchmark run does) needs only the
    # standard library, and the benchmark virtualenv has no matplotlib.
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    matplotlib.rcParams.update(
        {"svg.hashsalt": "mcpgen-charts", "svg.fonttype": "none", "font.size": 9}
    )
    bars = chart["bars"]
    series = chart["series"]
    height = 0.8 / len(series)
    figure, axes = plt.subplots(
        layout="constrained", figsize=(8, 0.9 + 0.32 * len(bars) * max(1, len(series) * 0.7))
    )
    colours = ["#3f51b5", "#ff9800", "#009688", "#9c27b0"]
    for number, name in enumerate(series):
        positions = [row - 0.4 + height * (number + 0.5) for row in range(len(bars))]
        values = [bar["values"][number] or 0.0 for bar in bars]
        drawn = axes.barh(positions, values, height=height, label=name, color=colours[number % 4])
        texts = [
            "" if bar["values"][number] is None else f"{v:g}x"
            for bar, v in zip(bars, values, strict=True)
        ]
        axes.bar_label(drawn, labels=texts, padding=2, fontsize=7)
    axes.set_yticks(range(len(bars)))
    axes.set_yticklabels([textwrap.fill(bar["label"], 48) for bar in bars], fontsize=7)
    axes.invert_yaxis()
    axes.axvline(1.0, color="#888888", linewidth=0.8, linestyle="--")
    axes.set_xlabel("times better for mcpgen (higher is better; dashed: parity)")
    axes.set_title(
        textwrap.fill(chart["title"] + (f": {chart['table']}" if chart["table"] else ""), 90),
        fontsize=9,
    )
    axes.margins(x=0.12)
    if len(series) > 1:
        figure.legend(fontsize=7, loc="outside lower center", ncols=len(series), frameon=False)
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    plt.close(figure)
    return out.getvalue()


def svgs(results: dict[str, Any]) -> dict[Path, str]:
    return {IMG / f"perf-{chart['id']}.svg": draw(chart) for chart in results["charts"]}


def refresh(doc: Path = DOC) -> None:
    """Re-read the published figures into the JSON; redraw when matplotlib is there."""
    results = extract(doc.read_text())
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(results_text(results))
    if importlib.util.find_spec("matplotlib") is None:
        print(
            "bench/charts.py: matplotlib missing here; run python bench/charts.py", file=sys.stderr
        )
        return
    write(results)


def write(results: dict[str, Any]) -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    drawn = svgs(results)
    for stale in IMG.glob("perf-*.svg"):
        if stale not in drawn:
            stale.unlink()
    for path, text in drawn.items():
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from-doc", action="store_true", help="re-read docs/performance.md first")
    parser.add_argument(
        "--check", action="store_true", help="fail when the JSON or a chart is stale"
    )
    args = parser.parse_args(argv)
    if args.check:
        results = json.loads(RESULTS.read_text())
        stale = [str(RESULTS)] if results != extract(DOC.read_text()) else []
        drawn = svgs(results)
        stale += [str(p) for p, text in drawn.items() if not p.is_file() or p.read_text() != text]
        stale += [str(p) for p in IMG.glob("perf-*.svg") if p not in drawn]
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    if args.from_doc:
        refresh()
        return 0
    write(json.loads(RESULTS.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
