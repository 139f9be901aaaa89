"""The README's two set-up commands exist, and CI runs exactly the test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO, need


def commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", setup, flags=re.S)


def test_readme_has_the_two_setup_commands() -> None:
    main, tests = commands()
    assert "examples/demo.py" in main  # the demo server and a client round trip
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    _, tests = commands()
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci.splitlines(), "keep .ci/run and the README's test command identical"


def test_main_job_command_works_in_a_fresh_checkout(tmp_path: Path) -> None:
    """The README's main-job command, exactly as written, in a copy of the tracked files
    with a new virtualenv: what a user on a fresh machine runs first."""
    main, _ = commands()
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    checkout = tmp_path / "mcpgen"
    for name in filter(None, files):
        source = REPO / name.decode()
        if source.is_file():
            target = checkout / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    proc = subprocess.run(
        ["bash", "-c", main],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    offline = proc.returncode != 0 and any(
        sign in proc.stderr
        for sign in ("No matching distribution", "Could not find a version", "NewConnectionError")
    )
    need(not offline, f"a package index for the main job's install ({proc.stderr[-300:]})")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.rstrip().endswith("round trip complete"), proc.stdout[-2000:]
