"""The README's two set-up commands exist, CI runs exactly the test command, and every
Python snippet runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import fresh_checkout, need_index
from tests.conftest import REPO


def commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", setup, flags=re.S)


def _bash(
    command: str, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_readme_has_the_two_setup_commands() -> None:
    main, tests = commands()
    assert "examples/demo.py" in main  # the demo server and a client round trip
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    _, tests = commands()
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci.splitlines(), "keep .ci/run and the README's test command identical"


@pytest.mark.slow
def test_main_job_command_works_in_a_fresh_checkout(tmp_path: Path) -> None:
    """The README's main-job command, exactly as written, in a copy of the tracked files
    with a new virtualenv: what a user on a fresh machine runs first."""
    main, _ = commands()
    checkout = fresh_checkout(tmp_path / "mcpgen")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    proc = _bash(main, checkout, env, timeout=600)
    need_index(proc, "the main job's install")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.rstrip().endswith("round trip complete"), proc.stdout[-2000:]
    # That install has the client extra and not the codegen one: the `mcpgen` command runs
    # the client commands, and the generator's say what to install.
    venv = checkout / ".venv" / "bin"
    tools = subprocess.run(
        [str(venv / "mcpgen"), "tools", "--", str(venv / "python"), "examples/everything.py"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert tools.returncode == 0, tools.stderr
    assert "test_simple_text()" in tools.stdout
    regenerate = subprocess.run(
        [str(venv / "mcpgen"), "regenerate", "--check"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert regenerate.returncode == 2
    assert "pip install 'mcpgen[codegen]'" in regenerate.stderr


# -- the README's Python snippets run as written --------------------------------------------------
# Each ```python block is recognised by a line of its own; every block must be one of these.
SNIPPETS = {
    "server": "def book(ctx: Context, city: str)",
    "client": 'Client.stdio(["python", "server.py"]',
}


def snippets() -> dict[str, str]:
    readme = (REPO / "README.md").read_text()
    found: dict[str, str] = {}
    for block in re.findall(r"```python\n(.+?)```", readme, flags=re.S):
        names = [name for name, mark in SNIPPETS.items() if mark in block]
        assert len(names) == 1, f"a README block this test does not run:\n{block}"
        assert names[0] not in found, f"two README blocks look like {names[0]!r}"
        found[names[0]] = block
    return found


def test_every_python_block_is_run() -> None:
    assert set(snippets()) == set(SNIPPETS)


def test_the_client_snippet_against_the_server_snippet(tmp_path: Path) -> None:
    """server.py and client.py are the snippets as written (each runs under its
    `__main__` guard); the client starts the server with `python server.py` and books
    through an elicitation round."""
    found = snippets()
    (tmp_path / "server.py").write_text(found["server"])
    (tmp_path / "client.py").write_text(found["client"])
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "client.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "modern 2026-07-28",
        "['forecast', 'book']",
        "booking: accept",
    ]


def test_the_shell_lines_run_against_the_server_snippet(tmp_path: Path) -> None:
    """The README's `mcpgen tools` and `mcpgen call` lines against server.py as written."""
    (tmp_path / "server.py").write_text(snippets()["server"])
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Five minutes", 1)[1].split("\n## ", 1)[0]
    (shell,) = re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    outputs = []
    for line in shell.splitlines():
        if line.startswith(("mcpgen tools ", "mcpgen call ")):
            proc = _bash(line.split("#", 1)[0], tmp_path, env)
            assert proc.returncode == 0, proc.stderr
            outputs.append(proc.stdout)
    assert len(outputs) == 2
    assert outputs[0] == "forecast(city, days?)  Forecast for a city.\nbook(city)\n"
    assert outputs[1] == "Paris: sunny for 3 days\n"
