"""bench/charts.py: the committed JSON holds the ratios published in docs/performance.md,
the committed charts are what it draws from that JSON, and the page shows every chart."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from types import ModuleType

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.docs


def load_charts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_charts", REPO / "bench" / "charts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


charts = load_charts()


def test_the_json_holds_the_published_ratios() -> None:
    committed = json.loads(charts.RESULTS.read_text())
    assert committed == charts.extract(charts.DOC.read_text()), (
        "bench/results/performance.json is stale: run python bench/charts.py --from-doc"
    )
    assert charts.RESULTS.read_text() == charts.results_text(committed)


@pytest.mark.slow
def test_the_committed_charts_are_drawn_from_the_json() -> None:
    drawn = charts.svgs(json.loads(charts.RESULTS.read_text()))
    assert drawn, "no charts"
    for path, text in drawn.items():
        assert path.is_file(), f"{path} missing: run python bench/charts.py"
        assert path.read_text() == text, f"{path} is stale: run python bench/charts.py"
    assert sorted(charts.IMG.glob("perf-*.svg")) == sorted(drawn)


def test_drawing_is_deterministic() -> None:
    chart = json.loads(charts.RESULTS.read_text())["charts"][0]
    first, second = charts.draw(chart), charts.draw(chart)
    assert first == second
    assert "<dc:date>" not in first


def test_the_page_shows_every_chart() -> None:
    page = charts.DOC.read_text()
    for path in charts.IMG.glob("perf-*.svg"):
        assert f"(img/{path.name})" in page, path.name


def test_extract_reads_ratio_columns_only() -> None:
    doc = textwrap.dedent(
        """\
        <!-- demo:start -->
        ## Demo: ours vs theirs

        ### Part one

        | workload | era | ours | ratio | paired (IQR) | mcpgen vs other | verdict |
        |---|---|---:|---:|---:|---:|---|
        | call | 2026-07-28 | 5 | 10.42x | 10.05x (9.1-10.4) | 2.53x less | **not met** |
        | list | legacy | 6 | - | - | 1,204.5x (paired 1.0x, 0.9-1.1) | met |

        | measure | value |
        |---|---|
        | no ratio here | 3x |
        <!-- demo:end -->
        """
    )
    assert charts.extract(doc)["charts"] == [
        {
            "id": "demo-1",
            "section": "demo",
            "title": "Demo: ours vs theirs",
            "table": "Part one",
            "series": ["ratio", "mcpgen vs other"],
            "bars": [
                {"label": "call, 2026-07-28", "values": [10.42, 2.53]},
                {"label": "list, legacy", "values": [None, 1204.5]},
            ],
        }
    ]
