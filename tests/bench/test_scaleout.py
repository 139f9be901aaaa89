"""bench/scaleout.py at a tiny scale: one and two workers of `mcpgen serve`, both flows
through wrk, every answer checked, the results written to JSON and between the markers
of a copy of the docs page. Not a timing test: the figures are in docs/performance.md."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, need

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis]


def test_the_bench_measures_both_flows_and_writes_its_section(tmp_path: Path) -> None:
    need(shutil.which("wrk") is not None, "wrk", "wrk")
    need(shutil.which("redis-server") is not None, "redis-server", "redis-server")
    doc = tmp_path / "performance.md"
    start = "<!-- scaleout:start (bench/scaleout.py writes this section) -->"
    doc.write_text(f"# Performance\n\n{start}\nold text\n<!-- scaleout:end -->\n\n## Later\n")
    out = tmp_path / "scaleout.json"
    argv = [sys.executable, str(REPO / "bench" / "scaleout.py"), "--workers", "1,2"]
    argv += ["--connections", "2", "--duration", "1", "--rounds", "1"]
    argv += ["--json", str(out), "--doc", str(doc)]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]

    results: dict[str, Any] = json.loads(out.read_text())
    rows = {(row["flow"], row["workers"]): row for row in results["rows"]}
    assert set(rows) == {("modern", 1), ("modern", 2), ("legacy", 1), ("legacy", 2)}
    for row in rows.values():
        assert row["errors"] == 0 and row["calls"] > 0 and row["cpu_ms_per_call"] > 0
        assert row["per_worker"] == pytest.approx(row["calls_per_s"] / row["workers"])
    for workers in (1, 2):
        legacy, modern = rows["legacy", workers], rows["modern", workers]
        # a legacy call creates, loads and deletes a session in Redis; a modern one has
        # nothing to keep there
        assert legacy["redis_per_call"] >= 3 and legacy["scripts_per_request"] > 0
        assert modern["redis_per_call"] < 0.1 * legacy["redis_per_call"]
        assert rows["legacy", workers]["requests"] >= 4 * rows["legacy", workers]["calls"] - 8
    text = doc.read_text()
    assert text.startswith(f"# Performance\n\n{start}\n## Scale-out: 1, 2 and 4 workers")
    assert "old text" not in text and text.endswith("<!-- scaleout:end -->\n\n## Later\n")
    assert "| legacy | 2 |" in text and "| modern | 1 |" in text
    assert "load average" in text and f"{os.cpu_count()} cores" in text
