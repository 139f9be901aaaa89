"""Run mypy (the project's pinned version, --strict) over a snippet written the way a
user writes it, and compare its findings with the marks in the snippet: `# E: code` on
a line mypy must reject with that error code, `# R: type` on a line whose
`reveal_type` must show that type."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def shared_cache(tmp: Path) -> list[str]:
    """mypy's options for a cache shared by the runs of one test process: `tmp` is a
    directory pytest made for the test (tmp_path, or tmp_path_factory.mktemp), so its
    parent is this run's (this worker's) own base directory. The first run analyses
    mcpgen, msgspec and the standard library; the next ones read them from the cache
    and check only what changed (their own files), with the same findings. Tests of
    one worker run one at a time, so no two runs write the cache at once."""
    return ["--cache-dir", str(tmp.parent / "mypy-cache")]


_FINDING = re.compile(r"^typed\.py:(\d+): (error|note): (.*?)(?:  \[([a-z-]+)\])?$")


def check_marks(source: str, tmp_path: Path) -> None:
    """mypy's findings on `source` are exactly its marks (no more, no fewer)."""
    (tmp_path / "typed.py").write_text(source)
    expected: set[tuple[int, str, str]] = set()
    for at, text in enumerate(source.splitlines(), 1):
        if "  # E: " in text:
            expected.add((at, "error", text.rsplit("  # E: ", 1)[1]))
        elif "  # R: " in text:
            revealed = text.rsplit("  # R: ", 1)[1]
            expected.add((at, "note", f'Revealed type is "{revealed}"'))
    env = {
        **os.environ,
        # mcpgen from this checkout, whatever the interpreter has installed
        "MYPYPATH": os.pathsep.join(str(REPO / d) for d in ("runtime", "generated")),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--show-error-codes",
            "--hide-error-context",
            "--no-pretty",
            *shared_cache(tmp_path),
            "typed.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.stderr == "", proc.stderr
    found: set[tuple[int, str, str]] = set()
    for line in proc.stdout.splitlines():
        match = _FINDING.match(line)
        assert match, f"unexpected mypy output: {line}\n{proc.stdout}"
        number, kind, message, code = match.groups()
        if kind == "error":
            found.add((int(number), kind, code))
        elif message.startswith("Revealed type"):
            found.add((int(number), kind, message))
        # other notes explain an error already counted (overload variants, "defined in")
    assert found == expected, proc.stdout
    errors = any(kind == "error" for _, kind, _ in expected)
    assert proc.returncode == (1 if errors else 0), proc.stdout
