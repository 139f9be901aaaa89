"""What `mcpgen call` shows (issue 24, item 7): the server's progress notifications and
log messages on stderr while it waits (a bar on a terminal, plain lines otherwise), and
a result whose text block repeats its structured content printed once."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.cli._progress import Watcher

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = ["--", sys.executable, str(REPO / "examples" / "everything.py")]


def mcpgen(*words: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpgen", *words]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("era", [pytest.param("legacy", marks=pytest.mark.slow), "modern"])
def test_progress_and_logs_on_stderr(era: str) -> None:
    progress = mcpgen("call", "test_tool_with_progress", "--era", era, *EVERYTHING)
    assert progress.returncode == 0, progress.stderr
    assert progress.stdout == "Progress test completed\n"
    assert progress.stderr.splitlines() == [
        f"progress {step}/100 ({step}%)  Completed step {step} of 100" for step in (0, 50, 100)
    ]
    logged = mcpgen("call", "test_tool_with_logging", "--era", era, *EVERYTHING)
    assert logged.stdout == "Tool with logging executed successfully\n"
    assert logged.stderr.splitlines() == [
        f"[info] conformance-test-server: Tool {what}"
        for what in ("execution started", "processing data", "execution completed")
    ]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_on_a_terminal() -> None:
    out = _Terminal()
    watcher = Watcher(out)
    watcher.progress(1, 4, "one")
    watcher.log("warning", {"disk": "low"}, None)
    watcher.progress(4, 4, None)
    watcher.done()
    bar = "[" + "#" * 8 + "-" * 22 + "]  25%  one"
    full = "[" + "#" * 30 + "] 100%"
    cleared = "\r" + " " * len(bar) + "\r"
    logged = f'{cleared}[warning] {{"disk": "low"}}\n{bar}'
    redrawn = f"\r{full}" + " " * (len(bar) - len(full))
    assert out.getvalue() == f"\r{bar}{logged}{redrawn}\n"


@pytest.mark.slow
def test_structured_content_printed_once(tmp_path: Path) -> None:
    server = tmp_path / "weather.py"
    server.write_text(
        "from mcpgen import Server\n\nserver = Server('w')\n\n\n"
        "@server.tool\ndef weather() -> dict[str, int]:\n    return {'celsius': 21}\n\n\n"
        "server.run()\n"
    )
    done = mcpgen("call", "weather", "--", sys.executable, str(server))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"celsius": 21}  # one JSON document, not two
