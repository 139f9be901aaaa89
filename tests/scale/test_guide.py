"""docs/guide/scale-out.md: every Python block runs as written and prints what the
page shows after it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_redis

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "scale-out.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_every_python_block_runs_and_prints_what_the_page_shows() -> None:
    outputs = []
    for code in blocks("python"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(PAGE), "exec"), {"__name__": "__guide__"})
        outputs.append(out.getvalue())
    text = blocks("text")
    assert outputs == [text[0], text[2]]
    assert "503" in PAGE.read_text() and "MCPGEN_STATE_KEYS" in PAGE.read_text()
