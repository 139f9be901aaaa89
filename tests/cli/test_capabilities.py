"""`--capability`: what the client commands and `mcpgen stubs` declare to the server.
By default they declare elicitation (the terminal answers), so a server listing some
tools only to capable clients lists them to `tools` and `stubs` as `call` can call them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERVER = [sys.executable, str(Path(__file__).with_name("capable_server.py"))]


def mcpgen(*words: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpgen", *words]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow
def test_tools_declares_elicitation_by_default_and_the_flag_changes_it() -> None:
    listed = mcpgen("tools", "--", *SERVER)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["echo()", "ask_user()"]
    bare = mcpgen("tools", "--capability", "none", "--", *SERVER)
    assert bare.stdout.split() == ["echo()"]
    more = mcpgen("tools", "--capability", "sampling", "--capability", "elicitation", "--", *SERVER)
    assert more.stdout.split() == ["echo()", "ask_user()", "sample_llm()"]
    wrong = mcpgen("tools", "--capability", "telepathy", "--", *SERVER)
    assert wrong.returncode == 2 and "telepathy" in wrong.stderr


@pytest.mark.slow
def test_stubs_have_the_tools_call_can_call(tmp_path: Path) -> None:
    out = tmp_path / "capable_tools.py"
    done = mcpgen("stubs", "-o", str(out), "--", *SERVER)
    assert done.returncode == 0, done.stderr
    assert "async def ask_user(self)" in out.read_text()
    done = mcpgen("stubs", "-o", str(out), "--capability", "sampling", "--", *SERVER)
    text = out.read_text()
    assert "async def sample_llm(self)" in text and "ask_user" not in text
    called = mcpgen("call", "ask_user", "--", *SERVER)
    assert called.stdout.strip() == "called ask_user"
