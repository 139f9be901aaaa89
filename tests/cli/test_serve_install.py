"""`mcpgen serve SPEC` runs a Server from an import path; `mcpgen install CLIENT SPEC`
merges an entry that starts it into an MCP client's configuration (under a temporary
HOME: the real one is never touched)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen import Client
from tests.conftest import REPO
from tests.processes import EVERYTHING, http_server

MCPGEN = [sys.executable, "-m", "mcpgen"]
WEATHER = '''\
from mcpgen import Server

mcp = Server("weather", "1.0")


@mcp.tool
def forecast(city: str) -> str:
    """Forecast for a city."""
    return f"{city}: sunny"
'''


def tool_names(command: list[str], cwd: Path | None = None) -> list[str]:
    async def main() -> list[str]:
        async with Client.stdio(command, cwd=None if cwd is None else str(cwd)) as client:
            return [tool.name for tool in await client.list_tools()]

    return asyncio.run(main())


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project directory holding weather.py (its server is `mcp`)."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "weather.py").write_text(WEATHER)
    return tmp_path / "proj"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    return tmp_path / "home"


@pytest.mark.slow
def test_serve_a_file_a_module_and_the_default_attribute(project: Path) -> None:
    assert "test_simple_text" in tool_names([*MCPGEN, "serve", f"{EVERYTHING}:server"])
    assert tool_names([*MCPGEN, "serve", "weather"], cwd=project) == ["forecast"]  # `mcp`
    assert tool_names([*MCPGEN, "serve", "weather:mcp", "--path", str(project)]) == ["forecast"]
    assert tool_names([*MCPGEN, "serve", "examples/everything.py"], cwd=REPO)[0] == (
        "test_simple_text"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_module_here:server", "no module named 'no_such_module_here'"),
        ("weather:nothing", "weather has no nothing"),
        ("weather:Server", "weather:Server is a type, not an mcpgen.Server"),
        ("missing.py", "no such file"),
    ],
)
def test_serve_says_what_is_wrong_with_the_spec(project: Path, spec: str, message: str) -> None:
    proc = subprocess.run(
        [*MCPGEN, "serve", spec],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_serve_over_http(tmp_path: Path) -> None:
    command = [*MCPGEN, "serve", str(EVERYTHING), "--transport", "http", "--host", "127.0.0.1"]
    with http_server(lambda port: [*command, "--port", str(port)], tmp_path / "log") as url:

        async def main() -> str:
            async with Client.http(url) as client:
                result = await client.call_tool("test_simple_text")
                return f"{client.era}: {result.content[0].text}"  # type: ignore[union-attr]

        assert asyncio.run(main()) == "modern: This is a simple text response for testing."


def install(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCPGEN, "install", *args],
        cwd=cwd,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "300"},  # usage errors on one line
    )


@pytest.mark.slow
def test_install_claude_desktop_merges_and_the_entry_starts_anywhere(
    home: Path, project: Path
) -> None:
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    before = {"globalShortcut": "Ctrl+Space", "mcpServers": {"other": {"command": "x"}}}
    config.write_text(json.dumps(before))
    proc = install("claude-desktop", "weather", "--env", "API_KEY=k=1", cwd=project)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(config.read_text())
    assert data["globalShortcut"] == "Ctrl+Space"
    assert data["mcpServers"]["other"] == {"command": "x"}
    entry = data["mcpServers"]["weather"]  # named after the server
    assert entry == {
        "command": os.path.abspath(sys.executable),
        "args": ["-m", "mcpgen", "serve", "weather", "--path", str(project.resolve())],
        "env": {"API_KEY": "k=1"},
    }
    # What the client would run, from another directory: the server answers.
    assert tool_names([entry["command"], *entry["args"]], cwd=home) == ["forecast"]


@pytest.mark.parametrize(
    ("client", "scope", "where"),
    [
        ("claude-code", "user", "home/.claude.json"),
        pytest.param("claude-code", "project", "proj/.mcp.json", marks=pytest.mark.slow),
        pytest.param("cursor", "user", "home/.cursor/mcp.json", marks=pytest.mark.slow),
        ("cursor", "project", "proj/.cursor/mcp.json"),
    ],
)
def test_install_each_client_and_scope(
    home: Path, project: Path, client: str, scope: str, where: str
) -> None:
    proc = install(client, "weather.py:mcp", "--scope", scope, "--name", "wx", cwd=project)
    assert proc.returncode == 0, proc.stderr
    config = project.parent / where
    entry = json.loads(config.read_text())["mcpServers"]["wx"]
    args = ["-m", "mcpgen", "serve", f"{project.resolve() / 'weather.py'}:mcp"]
    assert entry["args"] == args
    assert entry.get("type") == ("stdio" if client == "claude-code" else None)
    assert tool_names([entry["command"], *entry["args"]], cwd=home.parent) == ["forecast"]


def test_install_dry_run_prints_and_writes_nothing(home: Path, project: Path) -> None:
    config = home / ".claude.json"
    home.mkdir()
    config.write_text('{"numStartups": 3}')
    proc = install("claude-code", "weather", "--dry-run", cwd=project)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["numStartups"] == 3
    assert printed["mcpServers"]["weather"]["args"][:4] == ["-m", "mcpgen", "serve", "weather"]
    assert config.read_text() == '{"numStartups": 3}'
    assert "dry run" in proc.stderr


@pytest.mark.slow
def test_install_refuses_what_it_cannot_merge(home: Path, project: Path) -> None:
    config = project / "odd.json"
    config.write_text("[1, 2]")
    proc = install("cursor", "weather", "--config", str(config), cwd=project)
    assert proc.returncode == 2 and "does not hold a JSON object" in proc.stderr
    assert config.read_text() == "[1, 2]"
    unknown = install("vscode", "weather", cwd=project)
    assert (
        unknown.returncode == 2 and "one of claude-desktop, claude-code, cursor" in unknown.stderr
    )
    broken = install("cursor", "weather:nope", cwd=project)
    assert broken.returncode == 2 and "weather has no nope" in broken.stderr
    assert not (home / ".cursor").exists()


@pytest.mark.parametrize("transport", ["stdio", pytest.param("http", marks=pytest.mark.slow)])
@pytest.mark.parametrize("spec", ["weather.py", pytest.param("weather", marks=pytest.mark.slow)])
def test_serve_refuses_a_module_that_starts_its_server_on_import(
    project: Path, transport: str, spec: str
) -> None:
    """An unguarded `mcp.run()` would serve stdio during the import, then serve again."""
    (project / "weather.py").write_text(WEATHER + "\nmcp.run()\n")
    proc = subprocess.run(
        [*MCPGEN, "serve", spec, "--transport", transport, "--port", "0"],
        cwd=project,
        input='{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n',
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""  # nothing was served
    assert "starts a server when it is imported" in proc.stderr
    assert 'if __name__ == "__main__":' in proc.stderr
    assert "Traceback" not in proc.stderr
    # Guarded, the same file serves (and `python weather.py` would still run it).
    (project / "weather.py").write_text(WEATHER + '\nif __name__ == "__main__":\n    mcp.run()\n')
    assert tool_names([*MCPGEN, "serve", spec], cwd=project) == ["forecast"]
