"""The Python blocks of docs/guide/proxy.md run as written and print what the page says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guide" / "proxy.md"


def _run(block: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", block],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.slow
def test_the_guides_examples_run_as_written() -> None:
    text = GUIDE.read_text()
    bridge, aggregate = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    done = _run(bridge)
    assert done.returncode == 0, done.stderr
    answer = 'User response: action=accept, content={"username": "ada", "email": "ada@example.com"}'
    assert done.stdout.splitlines() == [f"modern {answer}", f"legacy {answer}"]
    for line in done.stdout.splitlines():
        assert line in text  # the page shows the output
    done = _run(aggregate)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['old_test_simple_text', 'old_test_image_content']",
        "old Hello, Ada!",
        "new Hello, Ada!",
    ]
    for line in done.stdout.splitlines():
        assert line in text
