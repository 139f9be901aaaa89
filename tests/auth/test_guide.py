"""docs/guide/authorization-server.md: every Python block runs as written, and the first
one prints what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "authorization-server.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_every_python_block_runs_and_the_first_prints_what_the_page_shows() -> None:
    python = blocks("python")
    assert len(python) >= 4
    outputs = []
    for code in python:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(PAGE), "exec"), {"__name__": "__guide__"})
        outputs.append(out.getvalue())
    assert outputs[0] == blocks("text")[0]
