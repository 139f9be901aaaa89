"""The `--check` drift report shared by `mcpgen stubs` and `mcpgen openapi`."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from mcpgen.cli._drift import DIFF_LINES, check_drift


def test_an_unchanged_module_is_up_to_date(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "tools.py"
    module.write_text("x = 1\n", encoding="utf-8")
    check_drift(module, "x = 1\n", source="document", command="mcpgen openapi")
    out = capsys.readouterr()
    assert out.out == f"{module} is up to date\n" and out.err == ""


def test_a_missing_module_drifts_with_the_whole_text_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "absent.py"
    with pytest.raises(typer.Exit) as exit_:
        check_drift(module, "x = 1\n", source="server's tools", command="mcpgen stubs")
    assert exit_.value.exit_code == 1
    out = capsys.readouterr()
    assert f"+++ {module} (server's tools)" in out.out and "+x = 1" in out.out
    assert "drifted from the server's tools; run `mcpgen stubs` again" in out.err
    assert not module.exists()  # --check writes nothing


def test_a_long_drift_is_cut_short_and_says_how_much_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = tmp_path / "tools.py"
    module.write_text("", encoding="utf-8")
    text = "".join(f"line_{n} = {n}\n" for n in range(100))
    with pytest.raises(typer.Exit):
        check_drift(module, text, source="document", command="mcpgen openapi")
    lines = capsys.readouterr().out.splitlines()
    # The diff is the two headers, a hunk header and 100 added lines: 103 in all.
    assert len(lines) == DIFF_LINES + 1
    assert lines[-1] == f"... {103 - DIFF_LINES} more lines"
    assert "+line_99 = 99" not in lines
