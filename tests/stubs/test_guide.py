"""docs/guide/stubs.md: its Python blocks, run in order in one namespace (as a reader
pastes them into one session), write the stubs, use them, and print what the page says."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "stubs.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_python_blocks_run_and_print_what_the_page_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    namespace: dict[str, object] = {"__name__": "__guide__"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for code in blocks("python"):
                exec(compile(code, str(PAGE), "exec"), namespace)
    finally:
        sys.modules.pop("weather_tools", None)
    written = (tmp_path / "weather_tools.py").read_text()
    assert out.getvalue() == blocks("text")[1]
    # The page's excerpt of the generated module is what the generator writes.
    for part in blocks("text")[0].split("\n    ...\n"):
        for piece in part.split("\n...\n"):
            assert piece.strip() in written, piece
