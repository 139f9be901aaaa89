"""bench/workload at a tiny scale: the harness starts Redis, the API stand-in and the
mcpgen server on the httpx stack (one worker, then two behind `mcpgen serve --workers 2`),
drives both flows with wrk, checks every answer, and writes its results (JSON, the
"A real workload" section of a copy of the docs page and its chart). Not a timing
test: the figures are in docs/performance.md."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import need

WORKLOAD = Path(__file__).resolve().parents[2] / "bench" / "workload"
ROW = {
    "calls_per_s": 100.0, "cpu_s_per_1000": 2.0, "p50_us": 1000, "p99_us": 5000,
    "rss_mb": 50.0, "errors": 0, "calls": 1000,
    "cpu_share": {"server": 0.9, "api": 0.1, "redis": 0.05, "wrk": 0.1},
}  # fmt: skip


def _report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_workload_report", WORKLOAD / "_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_harness_runs_both_flows_without_errors_and_writes_its_results(
    tmp_path: Path,
) -> None:
    need(shutil.which("wrk") is not None, "wrk", "wrk")
    need(shutil.which("redis-server") is not None, "redis-server", "redis-server")
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nEarlier sections.\n")
    out = tmp_path / "workload.json"
    argv = [sys.executable, str(WORKLOAD / "run.py"), "--servers", "mcpgen-httpx"]
    argv += ["--connections", "2", "--duration", "2", "--rounds", "1", "--products", "2000"]
    argv += ["--workers", "1", "2"]
    argv += ["--json", str(out), "--doc", str(doc)]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]

    results: dict[str, Any] = json.loads(out.read_text())
    for workers in ("1", "2"):
        for flow in ("legacy", "modern"):
            row = results["summary"][workers]["mcpgen-httpx"][flow]
            assert row["errors"] == 0 and row["socket_errors"] == 0
            assert row["calls"] > 0 and row["cpu_s_per_1000"] > 0 and row["rss_mb"] > 0
            assert row["p99_us"] >= row["p50_us"] > 0
    for flow in ("legacy", "modern"):
        profile = results["profiles"]["mcpgen-httpx"][flow]
        assert profile["errors"] == 0 and profile["calls"] > 0
        assert profile["us_per_call"]["mcpgen"] > 0 and profile["us_per_call"]["HTTP client"] > 0
    text = doc.read_text()
    assert text.startswith("# Performance\n\nEarlier sections.\n")
    assert "## A real workload" in text and "| mcpgen, httpx + redis.asyncio |" in text
    for workers in ("1 worker", "2 workers"):
        assert f"**legacy flow, {workers}**" in text and f"**modern flow, {workers}**" in text
    assert "(img/workload.svg)" in text and "Rust (rmcp) | 4,845 | 18.71x" in text
    svg = (tmp_path / "img" / "workload.svg").read_text()
    assert svg.startswith("<svg") and "mcpgen, httpx + redis.asyncio" in svg


def test_the_section_is_replaced_in_place_on_a_rerun(tmp_path: Path) -> None:
    report = _report()
    row = dict(ROW)
    results = {
        "when": "now", "servers": {"official": "official", "mcpgen-fast": "fast"},
        "machine": {"cpus": 2, "loadavg_before": ["1", "1", "1"], "python": "3"},
        "settings": {"connections": 2, "duration": 1, "rounds": 1, "products": 10,
                     "flows": ["modern"], "workers": [1]},
        "summary": {"1": {"official": {"modern": row},
                          "mcpgen-fast": {"modern": {**row, "calls_per_s": 500.0,
                                                     "cpu_s_per_1000": 0.25}}}},
        "profiles": {},
    }  # fmt: skip
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n")
    report.write(doc, results)
    report.write(doc, results)
    text = doc.read_text()
    assert text.count("## A real workload") == 1 and text.count(report.START) == 1
    assert "| fast | 500 | 5.00x | 0.250 | 8.00x |" in text
    assert "What bounds the fastest, fast: its server used 90% of a core" in text
    assert "The server's own CPU (one worker, one core) is the bound." in text
    doc.write_text(text + "\n## Later section\n")
    report.write(doc, results)
    assert doc.read_text().endswith("## Later section\n")
    chart = (tmp_path / "img" / "workload.svg").read_text()
    report.write(doc, results)
    assert (tmp_path / "img" / "workload.svg").read_text() == chart  # the same bytes


def test_the_published_figures_sit_beside_ours_as_multiples_of_fastmcp() -> None:
    report = _report()
    row = dict(ROW)
    results = {
        "servers": {"fastmcp": "FastMCP 4.2.3", "mcpgen-fast": "fast"},
        "summary": {w: {"fastmcp": {"legacy": row},
                        "mcpgen-fast": {"legacy": {**row, "calls_per_s": 1500.0 * int(w)}}}
                    for w in ("1", "2")},
    }  # fmt: skip
    lines = report.published(results)
    assert "| Go (mcp-go) | 3,616 | 13.96x |" in lines
    assert "| Python (FastMCP, 4 workers) | 259 | 1.00x |" in lines
    assert "| here: fast, 1 worker | 1,500 tool calls/s | 15.00x FastMCP |" in lines
    assert "| here: fast, 2 workers | 3,000 tool calls/s | 30.00x FastMCP |" in lines
