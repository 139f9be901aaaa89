"""`mcpgen --help` and every command's help show their text as written (no markup eats
`mcpgen[codegen]` or `[URL]`), and `mcpgen --version` prints the package's version."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

import mcpgen
from mcpgen.cli._app import build
from mcpgen_codegen import launch
from tests.cli.test_launcher import launch as run_cli
from tests.conftest import REPO

# A word in brackets as help texts write them: an extra (`mcpgen[codegen]`), `[URL]`, `[--`.
BRACKETED = re.compile(r"\[[A-Za-z][\w.-]*\]")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _texts(command: Any) -> list[str]:
    texts = [command.help or "", command.short_help or ""]
    texts += [str(getattr(param, "help", None) or "") for param in command.params]
    return texts


def _check_every_help(app: typer.Typer) -> set[str]:
    """Each command's help, and the top-level list, holds every bracketed word it was given."""
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    runner = CliRunner()
    seen: set[str] = set()
    listing = _flat(runner.invoke(app, ["--help"]).output)
    for name, command in group.commands.items():
        shown = runner.invoke(app, [name, "--help"])
        assert shown.exit_code == 0, shown.output
        page = _flat(shown.output)
        for text in _texts(command):
            for word in BRACKETED.findall(text):
                seen.add(word)
                assert word in page, (name, word, page)
        if command.short_help:  # given in full, the list shows it in full
            assert _flat(command.short_help) in listing, (name, listing)
    return seen


def test_every_help_keeps_its_bracketed_words() -> None:
    seen = _check_every_help(build())
    assert {"[URL]"} <= seen  # the walk did find bracketed words to check


def test_without_the_codegen_extra_the_help_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(launch, "NEEDS", ("jinja2", "no_such_module_for_mcpgen_tests"))
    seen = _check_every_help(build())
    assert "[codegen]" in seen
    listing = CliRunner().invoke(build(), ["--help"]).output
    for name in launch.COMMANDS:
        line = next(line for line in listing.splitlines() if line.strip().startswith(name))
        assert "pip install 'mcpgen[codegen]'" in line, line


def test_the_installed_command_names_the_extra_when_it_is_missing() -> None:
    shown = run_cli("--help", block=("jinja2", "ruff"))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("needs the codegen extra: pip install 'mcpgen[codegen]'") == 2
    assert "╭" not in shown.stdout  # plain text, whatever the terminal


def test_version_prints_the_package_version() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert mcpgen.__version__ == version
    for argv in (["--version"], ["--version", "tools"]):
        proc = run_cli(*argv)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == f"mcpgen {version}\n"
