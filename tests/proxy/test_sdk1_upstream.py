"""A legacy-only upstream (FastMCP of the official Python SDK 1.x, `mcp==1.27.0` in its
own virtualenv) reached through `mcpgen proxy` by our client in both eras: its mid-call
elicitation is answered by the downstream client."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client
from mcpgen_types import latest as t
from tests import tooling
from tests.proxy.common import MCPGEN

SDK1 = "mcp==1.27.0"
SERVER = Path(__file__).with_name("sdk1_server.py")


def _sdk1_python() -> str:
    """A python with the official SDK 1.x (and not mcpgen), made once and cached."""
    venv = tooling.CACHE / ("venv-" + SDK1.replace("==", "-"))
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", SDK1], check=True)
        (venv / ".installed").write_text(SDK1)
    return str(python)


@pytest.fixture(scope="module")
def upstream() -> list[str]:
    return [_sdk1_python(), str(SERVER)]


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sdk1_elicitation_through_the_proxy(upstream: list[str], era: str) -> None:
    asked: list[str] = []

    def on_elicitation(params: t.ElicitRequestParams) -> dict[str, Any]:
        asked.append(params.message)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def main() -> tuple[str, str]:
        command = [MCPGEN, "proxy", "--upstream-era", "auto", "--", *upstream]
        async with Client.stdio(command, era=era, on_elicitation=on_elicitation) as client:
            echoed = await client.call_tool("echo", {"text": "hi"})
            greeted = await client.call_tool("ask_name")
            texts = []
            for result in (echoed, greeted):
                block = result.content[0]
                assert isinstance(block, t.TextContent)
                texts.append(block.text)
            return texts[0], texts[1]

    assert asyncio.run(main()) == ("hi", "Hello, Ada!")
    assert asked == ["What is your name?"]
