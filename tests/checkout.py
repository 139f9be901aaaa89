"""A copy of the repository's tracked files: what a fresh clone holds, without the
working tree's build products, caches or stray files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO

__all__ = ["fresh_checkout"]


def fresh_checkout(target: Path) -> Path:
    """Copy every file `git ls-files` lists into `target` (created); returns `target`."""
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO / name.decode()
        if source.is_file():
            copy = target / name.decode()
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
    return target
