"""The MCP Inspector's command line (npm `@modelcontextprotocol/inspector`, `--cli`, a
client nobody here wrote) against mcpgen servers, in both eras, over stdio and
Streamable HTTP (and the old HTTP+SSE transport in the legacy era): examples/everything.py
(tools, a tool error, resources, prompts, logging) and examples/apps/server.py (the MCP
Apps metadata the Inspector probes). `--strict` makes the Inspector report every tool
schema it finds unportable, and exit 6 on one of error severity.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import EVERYTHING, everything_http
from tests.tooling import node22, npm_package

pytestmark = pytest.mark.slow

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
APPS = Path(__file__).resolve().parents[2] / "examples" / "apps" / "server.py"
STDIO = [sys.executable, str(EVERYTHING)]
# (transport, era): the old HTTP+SSE transport is legacy only.
CASES = [("stdio", "legacy"), ("stdio", "modern"), ("http", "legacy"), ("http", "modern")]
CASES += [("sse", "legacy")]


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    modules = npm_package(INSPECTOR)
    package = modules / "@modelcontextprotocol" / "inspector"
    entry = json.loads((package / "package.json").read_text())["bin"]["mcp-inspector"]
    return [node22(), str(package / entry), "--cli"]


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with everything_http(tmp_path_factory.mktemp("inspector") / "server.log") as url:
        yield url


def _run(cli: list[str], era: str, target: list[str], *args: str) -> tuple[int, Any, str]:
    """(exit code, the result, stderr) of one Inspector CLI run."""
    argv = [*cli, "-q", "--format", "json", "--protocol-era", era, *target, *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    result = json.loads(proc.stdout)["result"] if proc.stdout.strip() else None
    return proc.returncode, result, proc.stderr


def _target(transport: str, url: str) -> list[str]:
    if transport == "stdio":
        return STDIO
    if transport == "sse":
        return [url.removesuffix("/mcp") + "/sse", "--transport", "sse"]
    return [url]


@pytest.mark.parametrize(("transport", "era"), CASES)
def test_inspector_cli(inspector: list[str], http_url: str, transport: str, era: str) -> None:
    target = _target(transport, http_url)
    code, listed, err = _run(inspector, era, target, "--method", "tools/list", "--strict")
    assert code == 0, err
    names = {tool["name"] for tool in listed["tools"]}
    assert {"test_simple_text", "test_error_handling", "greet"} <= names
    code, called, err = _run(
        inspector, era, target, "--method", "tools/call", "--tool-name", "greet",
        "--tool-arg", "name=Ada",
    )  # fmt: skip
    assert code == 0, err
    assert called["content"][0]["text"] == "Hello, Ada!"
    code, failed, err = _run(
        inspector, era, target, "--method", "tools/call", "--tool-name", "test_error_handling"
    )
    assert code == 5 and failed["isError"] is True  # the Inspector's exit code for isError
    assert "tool_is_error" in err
    code, read, err = _run(
        inspector, era, target, "--method", "resources/read", "--uri", "test://static-text"
    )
    assert code == 0, err
    assert read["contents"][0]["text"] == "This is the content of the static text resource."
    code, prompt, err = _run(
        inspector, era, target, "--method", "prompts/get", "--prompt-name",
        "test_prompt_with_arguments", "--prompt-args", "arg1=a", "arg2=b",
    )  # fmt: skip
    assert code == 0, err
    assert prompt["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"
    if era == "legacy":  # 2026-07-28 has no logging/setLevel: a request carries its level
        level = ("--method", "logging/setLevel", "--log-level", "error")
        code, _, err = _run(inspector, era, target, *level)
        assert code == 0, err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_reads_app_metadata(inspector: list[str], era: str) -> None:
    """`--app-info` prints one JSON line per tool: the app's resource, its CSP, and who
    may see the tool."""
    argv = [*inspector, "-q", "--protocol-era", era, sys.executable, str(APPS)]
    argv += ["--method", "tools/list", "--app-info", "--advertise-apps"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    apps = {info["toolName"]: info for info in map(json.loads, proc.stdout.splitlines())}
    assert apps["list_products"]["hasApp"] is True
    assert apps["list_products"]["resourceUri"] == "ui://inventory/table.html"
    assert apps["list_products"]["resourceMimeType"] == "text/html;profile=mcp-app"
    assert apps["reprice"]["visibility"] == ["app"]
