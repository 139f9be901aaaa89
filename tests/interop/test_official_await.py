"""The official Python SDK's client (PyPI `mcp`, pinned in tests/tooling.py) calls the
await-style tools of tests/server/await_server.py over stdio (issue 11, item 8).

Legacy: each `await ctx.elicit(...)` (and `ctx.sample`, `ctx.list_roots`) is a real
server-to-client request the SDK's callbacks answer, and the handler runs once.
2026-07-28: each await is an input-required round the SDK fulfils and retries with
`inputResponses` and `requestState`; the handler runs once per round.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import tooling

REPO = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("official_await_client.py")
SERVER = [sys.executable, "-m", "tests.server.await_server"]
CLIENT_TIMEOUT = 120.0
MODES = {"legacy": ("2025-11-25", 1), "2026-07-28": ("2026-07-28", 3)}


@pytest.fixture(scope="session")
def official_python() -> str:
    return tooling.official_python()


def _run(python: str, mode: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.Popen(
        [python, str(CLIENT), "--mode", mode, "--", *SERVER],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        pytest.fail(f"the official client ran over {CLIENT_TIMEOUT} s\n{out}\n{err[-3000:]}")
    try:
        return proc.returncode, json.loads(out), err
    except json.JSONDecodeError:
        pytest.fail(f"not one JSON document (exit {proc.returncode}):\n{out}\n{err[-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", sorted(MODES))
def test_official_client_answers_awaited_input(mode: str, official_python: str) -> None:
    code, report, stderr = _run(official_python, mode)
    assert code == 0 and not report["errors"], f"{report['errors']}\n{stderr[-3000:]}"
    version, runs = MODES[mode]
    assert report["protocolVersion"] == version
    results = report["results"]
    assert results["two_questions"] == {"isError": False, "texts": [f"Ada is 36; runs={runs}"]}
    kinds_runs = 4 if runs == 3 else 1
    assert results["all_kinds"] == {
        "isError": False,
        "texts": [
            f"accept {{'name': 'Ada'}}; model: hi; roots: file:///home/ada; runs={kinds_runs}"
        ],
    }
    # Each question reached the user once, in order, whatever the era.
    assert report["asked"] == ["Your name?", "Your age?", "Your name?", "sampling", "roots"]
