"""`mcpgen proxy` as a process: stdio and Streamable HTTP downstream, a stdio upstream,
the eras crossed, an upstream elicitation answered by the downstream client."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client
from mcpgen_types import latest as t
from tests.processes import everything_http, http_server
from tests.proxy.common import MCPGEN, UPSTREAM


def _proxy_command(upstream_era: str, *extra: str) -> list[str]:
    return [MCPGEN, "proxy", *extra, "--upstream-era", upstream_era, "--", *UPSTREAM]


def _answer(params: t.ElicitRequestParams) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": params.message}}


async def _elicited(client: Client) -> str:
    async with client:
        result = await client.call_tool("test_input_required_result_elicitation")
        block = result.content[0]
        assert isinstance(block, t.TextContent)
        return block.text


@pytest.mark.parametrize(("upstream_era", "era"), [("legacy", "modern"), ("modern", "legacy")])
def test_stdio_proxy_crosses_eras(upstream_era: str, era: str) -> None:
    client = Client.stdio(_proxy_command(upstream_era), era=era, on_elicitation=_answer)
    assert asyncio.run(_elicited(client)) == "Hello, What is your name?!"


@pytest.mark.slow
@pytest.mark.parametrize(("upstream_era", "era"), [("legacy", "modern"), ("modern", "legacy")])
def test_http_proxy_crosses_eras(upstream_era: str, era: str, tmp_path: Path) -> None:
    def command(port: int) -> list[str]:
        return _proxy_command(upstream_era, "--transport", "http", "--port", str(port))

    with http_server(command, tmp_path / "proxy.log") as url:
        client = Client.http(url, era=era, on_elicitation=_answer)
        assert asyncio.run(_elicited(client)) == "Hello, What is your name?!"


def test_a_bad_upstream_era_is_refused() -> None:
    proc = subprocess.run(
        _proxy_command("ancient"), capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert "--upstream-era must be auto, legacy or modern" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("upstream_era", ["legacy", "modern"])
def test_an_http_upstream_served_on_stdio(upstream_era: str, tmp_path: Path) -> None:
    """stdio -> Streamable HTTP: the upstream a URL, each era forced, a modern client."""
    with everything_http(tmp_path / "upstream.log") as url:
        command = [MCPGEN, "proxy", "--upstream-era", upstream_era, url]
        client = Client.stdio(command, era="modern", on_elicitation=_answer)
        assert asyncio.run(_elicited(client)) == "Hello, What is your name?!"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_several_upstreams_mounted(era: str, tmp_path: Path) -> None:
    """`--upstream NAME=TARGET`, repeated: a command and a URL upstream under prefixes."""
    command_line = shlex.join(UPSTREAM)
    with everything_http(tmp_path / "upstream.log") as url:
        command = [MCPGEN, "proxy", "--upstream", f"cmd={command_line}", "--upstream", f"web={url}"]

        async def main() -> list[str]:
            async with Client.stdio(command, era=era, on_elicitation=_answer) as client:
                names = {tool.name for tool in await client.list_tools()}
                assert {"cmd_greet", "web_greet"} <= names and "greet" not in names
                texts = []
                for prefix in ("cmd", "web"):
                    result = await client.call_tool(
                        f"{prefix}_test_input_required_result_elicitation"
                    )
                    block = result.content[0]
                    assert isinstance(block, t.TextContent)
                    texts.append(block.text)
                return texts

        assert asyncio.run(main()) == ["Hello, What is your name?!"] * 2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--upstream", "noequals"], "--upstream takes NAME=URL"),
        pytest.param(
            ["--upstream", "a=x", "--upstream", "a=y"], "is given twice", marks=pytest.mark.slow
        ),
        pytest.param(
            ["--upstream", "a=x", "https://example.test/mcp"],
            "either --upstream options",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_bad_upstream_options_are_refused(extra: list[str], message: str) -> None:
    proc = subprocess.run(
        [MCPGEN, "proxy", *extra], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert message in " ".join(proc.stderr.split())
