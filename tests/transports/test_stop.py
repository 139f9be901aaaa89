"""An idle HTTP server (real subprocess) stops promptly on SIGTERM or SIGINT, says so in
one line, and prints no traceback: through `mcpgen serve` and through a script's own
`server.run(transport="http")`."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import httpx
import pytest

from tests.processes import EVERYTHING

ENTRIES = {
    "serve": [sys.executable, "-m", "mcpgen", "serve", str(EVERYTHING), "--transport", "http"],
    "script": [sys.executable, str(EVERYTHING), "--transport", "http"],
}
# What the process's status is after a clean stop: SIGTERM is re-raised (killed by it, as
# a supervisor expects), Ctrl-C is the shell's 130.
STATUS = {signal.SIGTERM: -signal.SIGTERM, signal.SIGINT: 130}
PROMPT = 3.0  # seconds; measured here: 0.1-0.3 s (a loaded 2-core machine gets slack)


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_an_idle_http_server_stops_on_a_signal(entry: str, sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [*ENTRIES[entry], "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)$", first)
        assert found is not None, first + proc.stderr.read()
        assert "HTTP+SSE" in proc.stderr.readline()
        # One exchange, so a kept-alive connection is open while the server idles.
        with httpx.Client(timeout=30) as http:
            reply = http.post(
                found.group(1),
                json={"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}},
                headers={"MCP-Protocol-Version": "2025-11-25", "Accept": "application/json"},
            )
            assert reply.status_code in (200, 400)
            time.sleep(0.2)
            began = time.monotonic()
            proc.send_signal(sig)
            status = proc.wait(timeout=30)
            took = time.monotonic() - began
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rest == f"mcpgen: {sig.name} received, stopping\n"
    assert status == STATUS[sig]
    assert took < PROMPT, took
