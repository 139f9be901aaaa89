"""A copy of the repository's tracked files: what a fresh clone holds, without the
working tree's build products, caches or stray files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO, need

__all__ = ["fresh_checkout", "need_index"]

# What pip says when the package index cannot be reached.
_OFFLINE = ("No matching distribution", "Could not find a version", "NewConnectionError")


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


def need_index(proc: subprocess.CompletedProcess[str], what: str) -> None:
    """A pip install that failed for want of a package index is a missing input
    (`need`: a skip, a failure under MCPGEN_STRICT_SKIPS), not a test failure."""
    offline = proc.returncode != 0 and any(sign in proc.stderr for sign in _OFFLINE)
    need(not offline, f"a package index for {what} ({proc.stderr[-300:]})", "network")
