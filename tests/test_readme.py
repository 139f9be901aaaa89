"""The README's two set-up commands exist, and CI runs exactly the test command."""

from __future__ import annotations

import re

from tests.conftest import REPO


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
