"""Every ```python block of docs/guide/telemetry.md runs as written, each in a fresh
interpreter (the global providers it sets can be set once per process)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "telemetry.md"
BLOCKS = re.findall(r"```python\n(.+?)```", GUIDE.read_text(), flags=re.S)


def test_the_guide_has_its_examples() -> None:
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("block", BLOCKS, ids=["console", "in-memory"])
def test_block_runs(block: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    if "ConsoleSpanExporter" in block:
        assert done.stdout.count('"name": "tools/call forecast"') == 2
        assert '"kind": "SpanKind.SERVER"' in done.stdout
        assert "Sunny in Lima" in done.stdout
    else:
        assert done.stdout.startswith("one trace: ")
