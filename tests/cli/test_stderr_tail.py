"""A stdio server that dies: the client's error (and so the CLI's) carries the end of
its stderr, e.g. the traceback of a server that failed."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from mcpgen import Client
from mcpgen._errors import ConnectionClosedError

# Reads one request, then fails with a traceback (after 30 lines of noise: only the tail
# is kept) and exits 1.
DIES = (
    "import sys\n"
    "sys.stdin.readline()\n"
    "for i in range(30): print(f'noise {i}', file=sys.stderr)\n"
    "def load():\n"
    "    raise RuntimeError('the database is gone')\n"
    "load()\n"
)
# Fails before reading anything, as a server with a broken import does.
CRASHES = "import no_such_module_for_mcpgen_tests\n"


def test_the_error_shows_the_exit_code_and_the_stderr_tail() -> None:
    async def main() -> None:
        async with Client.stdio([sys.executable, "-c", DIES], era="modern") as client:
            with pytest.raises(ConnectionClosedError) as caught:
                await client.list_tools()
            message = str(caught.value)
            assert message.startswith("the server closed the connection (exit code 1)")
            assert "RuntimeError: the database is gone" in message
            assert "Traceback (most recent call last):" in message
            assert "noise 29" in message and "noise 5\n" not in message  # bounded
            # Later requests fail at once, with the same story.
            with pytest.raises(ConnectionClosedError, match="the database is gone"):
                await asyncio.wait_for(client.list_prompts(), 5)

    asyncio.run(main())


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_cli_prints_why_a_server_died_at_start(era: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcpgen",
            "tools",
            "--era",
            era,
            "--",
            sys.executable,
            "-c",
            CRASHES,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "ModuleNotFoundError: No module named 'no_such_module_for_mcpgen_tests'" in proc.stderr
    assert "exit code 1" in proc.stderr
