"""stdio when stdin/stdout are not pipes: regular files, /dev/null (shell redirects)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).parent / "stdio_server.py"
# Both ways of serving stdio: serve_stdio under asyncio.run, and server.run(), which takes
# uvloop when it is installed (the http extra, in the dev environment).
COMMANDS = {
    "asyncio": [sys.executable, str(SERVER)],
    "server.run": [
        sys.executable,
        str(Path(__file__).resolve().parents[2] / "examples" / "bench_server.py"),
        "stdio",
    ],
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "redirect-test", "version": "1"},
    },
}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _requests() -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, PING))


@pytest.mark.parametrize("how", COMMANDS)
def test_files_in_and_out(how: str, tmp_path: Path) -> None:
    source, sink = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(_requests())
    with source.open("rb") as stdin, sink.open("wb") as stdout:
        done = subprocess.run(COMMANDS[how], stdin=stdin, stdout=stdout, timeout=30, check=False)
    assert done.returncode == 0
    replies = [json.loads(x) for x in sink.read_bytes().splitlines()]
    assert [r["id"] for r in replies] == [0, 1]
    assert replies[0]["result"]["protocolVersion"] == "2025-11-25"
    assert replies[1]["result"] == {}


@pytest.mark.parametrize("how", COMMANDS)
def test_stdout_to_dev_null_is_served_and_exits_cleanly(how: str) -> None:
    # A character device that is not a pipe: the event loop's pipe transport must not
    # be used on it (uvloop aborts the process on /dev/null).
    with open(os.devnull, "wb") as sink:
        done = subprocess.run(
            COMMANDS[how],
            input=_requests(),
            stdout=sink,
            stderr=subprocess.PIPE,
            timeout=30,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]


@pytest.mark.parametrize("how", COMMANDS)
def test_stdin_from_dev_null_is_an_immediate_clean_eof(how: str) -> None:
    with open(os.devnull, "rb") as source:
        done = subprocess.run(
            COMMANDS[how],
            stdin=source,
            capture_output=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert done.stdout == b""
