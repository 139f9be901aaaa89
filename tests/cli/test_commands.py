"""The client commands (`mcpgen discover | tools | call | read | prompts | prompt |
resources | templates`) as a user runs them, and what `--json` prints in each era."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.client.sse_server import OldServer, serve
from tests.conformance.runner import everything_server

REPO = Path(__file__).resolve().parents[2]
MCPGEN = str(Path(sys.executable).parent / "mcpgen")
SERVER = ["--", sys.executable, str(REPO / "examples" / "everything.py")]


def mcpgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MCPGEN, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with everything_server() as address:
        yield address


def test_tools_over_stdio() -> None:
    proc = mcpgen("tools", *SERVER)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "test_simple_text()  Returns a simple text response."
    assert "test_sampling(prompt)" in proc.stdout


@pytest.mark.slow
def test_call_and_read_with_json_over_http(url: str) -> None:
    called = mcpgen("call", url, "test_custom_headers", '{"region": "eu"}', "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["content"] == [{"type": "text", "text": "Region: eu"}]
    read = mcpgen("read", url, "test://static-text")
    assert read.stdout.strip() == "This is the content of the static text resource."


@pytest.mark.slow
def test_the_url_may_come_last(url: str) -> None:
    """The URL after the command's own words, as the guide writes it, works as it does
    first; `read` of an http(s) resource URI takes the first URL as the server."""
    last = mcpgen("call", "test_custom_headers", '{"region": "eu"}', url)
    assert last.returncode == 0, last.stderr
    assert last.stdout.strip() == "Region: eu"
    read = mcpgen("read", "test://static-text", url, "--era", "legacy")
    assert read.stdout.strip() == "This is the content of the static text resource."
    both = mcpgen("read", url, "https://example.com/missing")
    assert both.returncode == 1 and "give the server" not in both.stderr, both.stderr
    middle = mcpgen("call", "echo", url, "{}")
    assert middle.returncode == 2 and "URL first or last" in middle.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("era", "expected"),
    [("auto", "era: modern, protocol 2026-07-28"), ("legacy", "era: legacy, protocol 2025-11-25")],
)
def test_discover_in_each_era(era: str, expected: str) -> None:
    proc = mcpgen("discover", "--era", era, *SERVER)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == ["mcpgen-everything 1.0.0", expected]


@pytest.mark.slow
def test_errors_have_exit_codes() -> None:
    tool_error = mcpgen("call", "test_error_handling", *SERVER)
    assert tool_error.returncode == 1
    assert "intentionally returns an error" in tool_error.stdout
    unknown = mcpgen("call", "no_such_tool", *SERVER)
    assert unknown.returncode == 1
    assert "error -32602" in unknown.stderr
    bad_json = mcpgen("call", "test_simple_text", "{nope", *SERVER)
    assert bad_json.returncode == 2
    assert "not JSON" in bad_json.stderr
    no_target = mcpgen("tools")
    assert no_target.returncode == 2


@pytest.mark.slow
def test_a_url_reaches_an_http_sse_server() -> None:
    """Era auto walks down to the deprecated HTTP+SSE transport: a URL is enough."""
    with serve(OldServer()) as base:
        found = mcpgen("discover", f"{base}/sse")
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines()[:2] == ["old-sse 0.1", "era: legacy, protocol 2024-11-05"]
        called = mcpgen("call", f"{base}/sse", "echo", '{"text": "hi"}')
        assert (called.returncode, called.stdout) == (0, "hi\n"), called.stderr
        tools = mcpgen("tools", "--transport", "sse", f"{base}/sse")
        assert tools.returncode == 0, tools.stderr
        assert [line.split("(")[0] for line in tools.stdout.splitlines()] == [
            "echo",
            "ask",
            "notify",
            "slow",
        ]


@pytest.mark.slow
def test_prompts_resources_templates_and_prompt() -> None:
    prompts = mcpgen("prompts", *SERVER)
    assert prompts.returncode == 0, prompts.stderr
    assert prompts.stdout.splitlines()[:2] == [
        "test_simple_prompt()  A simple prompt without arguments.",
        "test_prompt_with_arguments(arg1, arg2)  A prompt with two required arguments.",
    ]
    resources = mcpgen("resources", *SERVER)
    assert resources.returncode == 0, resources.stderr
    assert (
        "test://static-text  static-text (text/plain)  A static text resource"
        in resources.stdout.splitlines()
    )
    templates = mcpgen("templates", *SERVER)
    assert templates.stdout.splitlines() == [
        "test://template/{id}/data  template-data  Data for an id."
    ]
    by_pairs = mcpgen("prompt", "test_prompt_with_arguments", "arg1=a", "arg2=b c", *SERVER)
    assert by_pairs.returncode == 0, by_pairs.stderr
    assert by_pairs.stdout.splitlines() == [
        "# A prompt with two required arguments.",
        "[user]",
        "Prompt with arguments: arg1='a', arg2='b c'",
    ]
    by_json = mcpgen(
        "prompt", "test_prompt_with_arguments", '{"arg1": "x", "arg2": 2}', "--json", *SERVER
    )
    assert json.loads(by_json.stdout)["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "Prompt with arguments: arg1='x', arg2='2'"},
        }
    ]
    bad = mcpgen("prompt", "test_prompt_with_arguments", "arg1", *SERVER)
    assert bad.returncode == 2 and "key=value" in bad.stderr
    missing = mcpgen("prompt", "no_such_prompt", *SERVER)
    assert missing.returncode == 1 and "error -32602" in missing.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "modern_only"),
    [
        (("call", "test_simple_text"), {"resultType"}),
        (("read", "test://static-text"), {"resultType", "ttlMs", "cacheScope"}),
        (("prompt", "test_simple_prompt"), {"resultType"}),
    ],
)
def test_json_is_the_negotiated_revision_s_wire_result(
    command: tuple[str, ...], modern_only: set[str]
) -> None:
    """A legacy session's result carries no field its revision lacks; a modern one does."""
    legacy = mcpgen(*command, "--json", "--era", "legacy", *SERVER)
    assert legacy.returncode == 0, legacy.stderr
    assert not modern_only & set(json.loads(legacy.stdout))
    modern = mcpgen(*command, "--json", "--era", "modern", *SERVER)
    assert modern_only <= set(json.loads(modern.stdout))
    tools = json.loads(mcpgen("tools", "--json", "--era", "legacy", *SERVER).stdout)
    assert tools[0] == {
        "description": "Returns a simple text response.",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "name": "test_simple_text",
    }


@pytest.mark.slow
def test_json_of_an_oldest_revision_session() -> None:
    """2024-11-05 has no structuredContent: a tool's structured result keeps its text only."""
    with serve(OldServer()) as base:
        called = mcpgen("call", f"{base}/sse", "echo", '{"text": "hi"}', "--json")
        assert called.returncode == 0, called.stderr
        assert json.loads(called.stdout) == {"content": [{"type": "text", "text": "hi"}]}


def test_call_a_tool_that_runs_only_as_a_task() -> None:
    """`mcpgen call` of a task-only tool: run as a task, waited for, its result shown."""
    server = ["--", sys.executable, str(REPO / "tests" / "cli" / "task_server.py")]
    called = mcpgen("call", "report", '{"topic": "owls"}', *server)
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "report on owls"
