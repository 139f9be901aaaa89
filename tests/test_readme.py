"""The README's two set-up commands exist, CI runs exactly the test command, and every
Python snippet runs as written."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow
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
    need(
        not offline, f"a package index for the main job's install ({proc.stderr[-300:]})", "network"
    )
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
    "mount": "app = FastAPI()",
    "tasks_server": 'server = Server("studio", "1.0")',
    "client": 'Client.stdio(["python", "server.py"]',
    "tasks_client": "if isinstance(reply, ToolTask):",
    "http": "app = httpx.ASGITransport(app=server.asgi_app())",
    "types": "from mcpgen_types import v2026_07_28 as mcp",
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


def run_snippet(name: str, namespace: dict[str, object]) -> None:
    exec(compile(snippets()[name], f"README.md ({name} snippet)", "exec"), namespace)


def test_every_python_block_is_run() -> None:
    assert set(snippets()) == set(SNIPPETS)


def test_the_client_snippet_against_the_server_snippet(tmp_path: Path) -> None:
    """server.py is the server snippet as written (it ends in `server.run()`); the client
    snippet starts it with `python server.py` and books through an elicitation round."""
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


def test_the_mount_snippet_serves_under_its_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    from mcpgen import Client, Server

    ran: list[object] = []
    monkeypatch.setattr(Server, "run", lambda self, *a, **k: ran.append(self))
    namespace: dict[str, object] = {}
    run_snippet("server", namespace)
    assert ran == [namespace["server"]]  # the snippet's `server.run()`, neutralised
    run_snippet("mount", namespace)

    async def main() -> list[str]:
        transport = httpx.ASGITransport(app=namespace["app"])  # type: ignore[arg-type]
        http = httpx.AsyncClient(transport=transport)
        async with Client.http("http://127.0.0.1/weather/mcp", httpx_client=http) as client:
            return [tool.name for tool in await client.list_tools()]

    assert asyncio.run(main()) == ["forecast", "book"]


def test_the_tasks_snippets(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    run_snippet("tasks_server", namespace)
    run_snippet("tasks_client", namespace)
    assert capsys.readouterr().out == "cube.png\n"


def test_the_http_request_snippet(capsys: pytest.CaptureFixture[str]) -> None:
    run_snippet("http", {})
    assert capsys.readouterr().out.splitlines() == [
        "200 [{'type': 'text', 'text': 'Paris: sunny'}]",
        "400 -32020",
    ]


def test_the_types_snippet() -> None:
    run_snippet("types", {})  # its asserts are the check
