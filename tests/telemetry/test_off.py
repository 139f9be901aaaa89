"""Telemetry off costs nothing: a full server and client round trip never imports
opentelemetry, and the constructors take the switch (or MCPGEN_OTEL=1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen import Client, Server
from mcpgen._server import Session
from mcpgen.telemetry import ENV, enabled

REPO = Path(__file__).resolve().parents[2]
ROUND_TRIP = """
import asyncio, sys
from mcpgen import Client, Server
server = Server("off")

@server.tool
def echo(text: str) -> str:
    return text

async def main():
    for era in ("modern", "legacy"):
        async with Client.memory(server, era=era) as c:
            assert (await c.call_tool("echo", {"text": "x"})).content[0].text == "x"
    async with Client.stdio([sys.executable, "-c", SERVE]) as c:
        assert (await c.call_tool("echo", {"text": "y"})).content[0].text == "y"

SERVE = '''
import sys
from mcpgen import Server
server = Server("child")
server.tool(lambda text: text, name="echo")
server.run()
'''
asyncio.run(main())
print(sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"))
"""


@pytest.mark.parametrize("flag", ["", "0"])
def test_off_never_imports_opentelemetry(flag: str) -> None:
    env = {**os.environ, ENV: flag}
    done = subprocess.run(
        [sys.executable, "-c", ROUND_TRIP],
        capture_output=True, text=True, env=env, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_on_imports_it_and_the_switch_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV, "1")
    assert enabled(None) and not enabled(False) and enabled(True)
    assert type(Server("s").session()) is not Session  # the environment turns it on
    assert type(Server("s", telemetry=False).session()) is Session
    monkeypatch.delenv(ENV)
    assert not enabled(None)
    assert type(Server("s").session()) is Session
    assert type(Server("s", telemetry=True).session()) is not Session


def test_every_client_constructor_takes_the_switch() -> None:
    plain = Client.memory(Server("s"))
    traced = Client.memory(Server("s"), telemetry=True)
    # A traced connection's exchange is a function of its own, not the bound method.
    assert "_exchange" not in vars(plain.connection)
    assert "_exchange" in vars(traced.connection)
    for client in (
        Client.stdio([sys.executable, "-c", "pass"], telemetry=True),
        Client.http("http://127.0.0.1:9/mcp", telemetry=True),
        Client.sse("http://127.0.0.1:9/sse", telemetry=True),
    ):
        assert "_exchange" in vars(client.connection)
