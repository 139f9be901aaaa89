"""The `mcpgen` command comes with the client extra; each group of commands says what to
install when its extra is missing (simulated by blocking the imports)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO

EVERYTHING = str(REPO / "examples" / "everything.py")


def launch(
    *argv: str, block: tuple[str, ...] = (), entry: str = "mcpgen.cli"
) -> subprocess.CompletedProcess[str]:
    """Run the command line in a new interpreter with the modules `block` unimportable."""
    code = (
        "import sys\n"
        f"for name in {block!r}: sys.modules[name] = None\n"
        f"sys.argv = ['mcpgen', *{list(argv)!r}]\n"
        f"from {entry} import main\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


def test_the_client_extra_carries_the_command_line() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["mcpgen"] == "mcpgen.cli:main"
    client = {dep.split(">")[0] for dep in project["optional-dependencies"]["client"]}
    assert {"typer", "httpx"} <= client
    plugins = project["entry-points"]["mcpgen.cli"]
    assert plugins == {"codegen": "mcpgen_codegen.launch:register"}
    readme = (REPO / "README.md").read_text()
    assert "pip install 'mcpgen[client]'" in readme


def test_without_typer_it_says_to_install_the_client_extra() -> None:
    proc = launch("tools", block=("typer",))
    assert proc.returncode == 2
    assert "pip install 'mcpgen[client]'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_without_the_codegen_extra_the_client_commands_work() -> None:
    block = ("jinja2", "ruff")
    shown = launch("--help", block=block)
    assert shown.returncode == 0, shown.stderr
    for command in ("tools", "prompts", "serve", "install", "regenerate", "fetch-schemas"):
        assert command in shown.stdout
    listed = launch("prompts", "--", sys.executable, EVERYTHING, block=block)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("test_simple_prompt()")
    regenerate = launch("regenerate", "--check", block=block)
    assert regenerate.returncode == 2
    assert "mcpgen regenerate needs the codegen extra" in regenerate.stderr
    assert "pip install 'mcpgen[codegen]'" in regenerate.stderr
    assert "Traceback" not in regenerate.stderr


@pytest.mark.slow
def test_with_everything_each_entry_runs_every_command(schema_dir: Path) -> None:
    """The console script, `python -m mcpgen` and the previous script entry alike."""
    script = Path(sys.executable).parent / "mcpgen"
    runs = [
        subprocess.run([str(script), "--help"], capture_output=True, text=True, check=False),
        subprocess.run(
            [sys.executable, "-m", "mcpgen", "--help"], capture_output=True, text=True, check=False
        ),
        launch("--help", entry="mcpgen_codegen.launch"),
    ]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
        for command in ("call", "templates", "prompt", "serve", "install", "regenerate"):
            assert f" {command} " in proc.stdout
        assert proc.stdout.count(" regenerate ") == 1  # named by the entry point and by hand
    # The generator's command runs for real through the runtime's entry.
    check = launch("regenerate", "--check", "--root", str(REPO), "--schema-dir", str(schema_dir))
    assert check.returncode == 0, check.stderr
    assert "generated code is up to date" in check.stdout


def test_without_httpx_a_url_says_to_install_the_client_extra() -> None:
    proc = launch("tools", "http://127.0.0.1:9/mcp", block=("httpx",))
    assert proc.returncode == 2
    assert "pip install 'mcpgen[client]'" in proc.stderr
    assert "Traceback" not in proc.stderr
