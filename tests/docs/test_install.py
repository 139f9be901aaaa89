"""The install commands the pages give work today: mcpgen is not on the package index yet,
so every `pip install 'mcpgen[...]'` is marked as the released form, and the quickstart's
first step installs from a checkout (a form pip accepts, tried here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import fresh_checkout
from tests.conftest import REPO
from tests.docs.blocks import fenced_blocks, pages

# An install by name from the index (not a path `./mcpgen[...]` or a wheel file).
BY_NAME = re.compile(r"pip install (-e )?['\"]?mcpgen(\[|\b)")


def _marked(lines: list[str], index: int) -> bool:
    window = lines[max(0, index - 3) : index + 3]
    return any("releas" in line.lower() for line in window)


def test_every_install_from_the_index_is_marked_for_releases() -> None:
    unmarked: list[str] = []
    seen = 0
    for page in [REPO / "README.md", *pages()]:
        lines = page.read_text().splitlines()
        for index, line in enumerate(lines):
            if BY_NAME.search(line):
                seen += 1
                if not _marked(lines, index):
                    unmarked.append(f"{page.relative_to(REPO)}:{index + 1}: {line.strip()}")
    assert seen > 0  # the released form is still shown somewhere
    assert unmarked == []


@pytest.mark.slow
def test_the_quickstart_installs_from_a_checkout(tmp_path: Path) -> None:
    shell = [b for b in fenced_blocks(REPO / "docs" / "quickstart.md") if b.language == "sh"]
    first = shell[0].code.splitlines()
    assert first[0].startswith("git clone ")
    install = next(line for line in first if line.startswith("pip install "))
    words = install.split("#", 1)[0].split()
    assert words[:2] == ["pip", "install"] and words[2] == "'./mcpgen[http,client]'"
    # The checkout cloned next to the project; pip resolves the path and the extras.
    fresh_checkout(tmp_path / "mcpgen")
    offline = ["--dry-run", "--no-deps", "--no-build-isolation", "--no-index"]
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", *offline, words[2].strip("'")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Would install mcpgen-" in proc.stdout
