"""The command line and MCP Apps: `mcpgen tools` marks the tools that have an app, and
`mcpgen app` prints an app's HTML or writes it to a file (issue 25)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SERVER = ["--", sys.executable, str(REPO / "examples" / "apps" / "server.py")]
MCPGEN = [sys.executable, "-m", "mcpgen"]


def mcpgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCPGEN, *args], capture_output=True, text=True, timeout=60, check=False, cwd=REPO
    )


@pytest.mark.slow
def test_tools_marks_apps_and_app_only_tools() -> None:
    proc = mcpgen("tools", *SERVER)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split("(")[0]: line for line in proc.stdout.splitlines()}
    assert "[app ui://inventory/table.html]" in lines["list_products"]
    assert "[app app-only ui://inventory/table.html]" in lines["reprice"]
    assert "[app" not in lines["describe_view"]


@pytest.mark.slow
def test_app_prints_or_writes_the_html(tmp_path: Path) -> None:
    shown = mcpgen("app", "list_products", *SERVER)
    assert shown.returncode == 0, shown.stderr
    html = (REPO / "examples" / "apps" / "table.html").read_text()
    assert shown.stdout == html + "\n"
    target = tmp_path / "table.html"
    written = mcpgen("app", "ui://inventory/table.html", str(target), *SERVER)
    assert written.returncode == 0, written.stderr
    assert target.read_text() == html
    assert "ui://inventory/table.html ->" in written.stderr
    missing = mcpgen("app", "no_such_tool", *SERVER)
    assert missing.returncode != 0 and "no tool 'no_such_tool'" in missing.stderr
    textonly = mcpgen("app", "describe_view", *SERVER)
    assert textonly.returncode != 0 and "has no app" in textonly.stderr
