"""`mcpgen discover | tools | call | read` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.sse_server import OldServer, serve
from tests.conformance.runner import everything_server

REPO = Path(__file__).resolve().parents[2]
MCPGEN = str(Path(sys.executable).parent / "mcpgen")
SERVER = ["--", sys.executable, str(REPO / "examples" / "everything.py")]


def mcpgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCPGEN, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with everything_server() as address:
        yield address


def test_tools_over_stdio() -> None:
    proc = mcpgen("tools", *SERVER)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "test_simple_text()  Returns a simple text response."
    assert "test_sampling(prompt)" in proc.stdout


def test_call_and_read_with_json_over_http(url: str) -> None:
    called = mcpgen("call", url, "test_custom_headers", '{"region": "eu"}', "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["content"] == [{"type": "text", "text": "Region: eu"}]
    read = mcpgen("read", url, "test://static-text")
    assert read.stdout.strip() == "This is the content of the static text resource."


@pytest.mark.parametrize(
    ("era", "expected"),
    [("auto", "era: modern, protocol 2026-07-28"), ("legacy", "era: legacy, protocol 2025-11-25")],
)
def test_discover_in_each_era(era: str, expected: str) -> None:
    proc = mcpgen("discover", "--era", era, *SERVER)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == ["mcpgen-everything 1.0.0", expected]


def test_errors_have_exit_codes() -> None:
    tool_error = mcpgen("call", "test_error_handling", *SERVER)
    assert tool_error.returncode == 1
    assert "intentionally returns an error" in tool_error.stdout
    unknown = mcpgen("call", "no_such_tool", *SERVER)
    assert unknown.returncode == 1
    assert "error -32602" in unknown.stderr
    bad_json = mcpgen("call", "test_simple_text", "{nope", *SERVER)
    assert bad_json.returncode == 2
    assert "not JSON" in bad_json.stderr
    no_target = mcpgen("tools")
    assert no_target.returncode == 2


def test_a_url_reaches_an_http_sse_server() -> None:
    """Era auto walks down to the deprecated HTTP+SSE transport: a URL is enough."""
    with serve(OldServer()) as base:
        found = mcpgen("discover", f"{base}/sse")
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines()[:2] == ["old-sse 0.1", "era: legacy, protocol 2024-11-05"]
        called = mcpgen("call", f"{base}/sse", "echo", '{"text": "hi"}')
        assert (called.returncode, called.stdout) == (0, "hi\n"), called.stderr
        tools = mcpgen("tools", "--transport", "sse", f"{base}/sse")
        assert tools.returncode == 0, tools.stderr
        assert [line.split("(")[0] for line in tools.stdout.splitlines()] == [
            "echo",
            "ask",
            "notify",
            "slow",
        ]


def test_console_script_without_typer_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['typer'] = None\n"  # as if the cli extra were missing
        "from mcpgen_codegen.launch import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert "pip install 'mcpgen[cli]'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_console_script_runs_the_command_line() -> None:
    code = (
        "import sys; sys.argv = ['mcpgen', '--help']\n"
        "from mcpgen_codegen.launch import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "regenerate" in proc.stdout and "call" in proc.stdout
