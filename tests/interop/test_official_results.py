"""The official Python SDK's client (PyPI `mcp`, pinned in tests/tooling.py) calls every
tool of tests/server/output_matrix.py over stdio, in both eras (issue 11, item 3).

The client checks each result against the tool's listed output schema: it raises when a
tool with an output schema sends no structuredContent (as it did for `-> list` and
`-> list[ContentBlock]` tools returning content blocks) or when the structured value
does not match. Every call must succeed and give what the matrix expects.
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
from tests.server.output_matrix import ABSENT, CASES, Case

REPO = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("official_results_client.py")
SERVER = [sys.executable, "-m", "tests.server.output_matrix"]
CLIENT_TIMEOUT = 120.0
MODES = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}


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
def test_official_client_accepts_every_result(mode: str, official_python: str) -> None:
    code, report, stderr = _run(official_python, mode)
    assert code == 0 and not report["errors"], f"{report['errors']}\n{stderr[-3000:]}"
    assert report["protocolVersion"] == MODES[mode]
    tools = report["tools"]
    assert sorted(tools) == sorted(CASES)
    failed = {name: entry["error"] for name, entry in tools.items() if "error" in entry}
    assert not failed, json.dumps(failed, indent=1)
    for name, entry in tools.items():
        expected = CASES[name] if mode == "2026-07-28" else CASES[name].legacy(MODES[mode])
        got = Case(entry["outputSchema"], entry.get("structuredContent", ABSENT), entry["content"])
        assert got == expected, name
        assert entry["isError"] is False, name
