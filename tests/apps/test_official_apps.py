"""MCP Apps between mcpgen and the official Python SDK 2.3 (issue 25): mcpgen's client
reads an app the official server serves (and the server sees the client's declared
support), and the official client sees what an mcpgen server writes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen import APP_MIME_TYPE, Client, tool_app
from tests.conftest import REPO
from tests.tooling import official_python

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_mcpgen_client_reads_an_official_servers_app(era: str) -> None:
    python = official_python()

    async def main() -> None:
        command = [python, str(HERE / "official_apps_server.py")]
        async with Client.stdio(command, era=era, apps=True) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            link = tool_app(tools["clock"])
            assert link is not None and link.resource_uri == "ui://clock/app.html"
            hidden = tool_app(tools["tick"])
            assert hidden is not None and hidden.visibility == ["app"]
            app = await client.read_app(tools["clock"])
            assert app.html == "<!doctype html><p id='time'></p>"
            assert app.ui is not None and app.ui.prefers_border is False
            assert app.ui.csp is not None and app.ui.csp.connect_domains == ["https://time.example"]
            answer = await client.call_tool("clock", {})
            assert answer.content[0].text == "apps"  # the official server read our declaration
        async with Client.stdio(command, era=era) as client:
            assert (await client.call_tool("clock", {})).content[0].text == "text only"

    asyncio.run(asyncio.wait_for(main(), 90))


def test_the_official_client_sees_an_mcpgen_servers_app() -> None:
    proc = subprocess.run(
        [
            official_python(),
            str(HERE / "official_apps_client.py"),
            sys.executable,
            str(REPO / "examples" / "apps" / "server.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["tools"]["list_products"]["ui"] == {"resourceUri": "ui://inventory/table.html"}
    assert seen["tools"]["reprice"]["ui"]["visibility"] == ["app"]
    assert seen["mimeType"] == APP_MIME_TYPE and seen["isHtml"] is True
    assert seen["meta"]["ui"]["prefersBorder"] is True
    assert seen["listed"]["ui://inventory/table.html"] == APP_MIME_TYPE
