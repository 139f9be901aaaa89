"""The official Python SDK's client (PyPI `mcp`, pinned in tests/tooling.py) against
examples/everything.py, over stdio and Streamable HTTP, in each of its three modes
(and over the deprecated 2024-11-05 HTTP+SSE transport in `legacy` mode):

* `legacy`: the initialize handshake (2025-11-25); input arrives as a real
  server-to-client `elicitation/create` request.
* `2026-07-28`: the version pinned, no handshake at all; every request carries its
  version in `_meta`, and input is an input-required result (MRTR) the client
  fulfils and retries with `inputResponses` + `requestState`.
* `auto`: a `server/discover` probe; our server supports 2026-07-28, so the modern
  era must win.

The SDK stays out of this process: `official_python_client.py` runs under the SDK's own
interpreter, taps every message crossing its transport, and prints one JSON report.
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
from tests.processes import EVERYTHING, everything_http

REPO = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).with_name("official_python_client.py")

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TRANSPORTS = ("stdio", "http")
MODES = ("legacy", MODERN, "auto")
# The old HTTP+SSE transport predates the modern era: legacy only.
# The quick tier keeps one case (the official client, modern, over stdio); the rest are
# `slow` (each starts the SDK's interpreter and a server).
QUICK_CASE = ("stdio", MODERN)
CASES = [
    case if case == QUICK_CASE else pytest.param(*case, marks=pytest.mark.slow)
    for case in [(t, m) for t in TRANSPORTS for m in MODES] + [("sse", "legacy")]
]
CLIENT_TIMEOUT = 120.0
SERVER_START_TIMEOUT = 30.0

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."


@pytest.fixture(scope="session")
def official_python() -> str:
    """The interpreter of the cached venv holding the official SDK (skips without it)."""
    return tooling.official_python()


def _run_client(python: str, args: list[str]) -> tuple[int, dict[str, Any], str]:
    """Run the client script in its own process group; kill the group on a timeout
    (so a stdio server it launched cannot outlive it)."""
    proc = subprocess.Popen(
        [python, str(CLIENT), *args],
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
        pytest.fail(
            f"the official client ran over {CLIENT_TIMEOUT} s\nstdout: {out}\nstderr: {err}"
        )
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        pytest.fail(
            f"the client's stdout is not one JSON document (exit {proc.returncode}):\n{out}"
        )
    return proc.returncode, report, err


def _requests_sent(wire: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in wire if m["dir"] == "send" and "method" in m and "id" in m]


def _check_modern_wire(wire: list[dict[str, Any]], transport: str) -> None:
    """Stateless 2026-07-28: the version rides on every request, no session is set up."""
    sent = _requests_sent(wire)
    assert sent
    assert all(m.get("metaProtocolVersion") == MODERN for m in sent), sent
    if transport == "http":
        headers = [m.get("headers") or {} for m in sent]
        assert all(h.get("mcp-protocol-version") == MODERN for h in headers), sent
        assert all(
            h.get("mcp-method") == m["method"] for h, m in zip(headers, sent, strict=True)
        ), sent
    methods = [m.get("method") for m in wire if m["dir"] == "send"]
    assert "initialize" not in methods and "notifications/initialized" not in methods


def _check_mrtr_round(report: dict[str, Any]) -> None:
    """One input-required round: the result asks, the client answers by retrying the call."""
    wire: list[dict[str, Any]] = report["wire"]
    tool = "test_input_required_result_elicitation"
    calls = [m for m in wire if m["dir"] == "send" and m.get("name") == tool]
    assert len(calls) == 2, calls
    first, retry = calls
    answers = {m["id"]: m for m in wire if m["dir"] == "recv" and "result" in m}
    asked = answers[first["id"]]["result"]
    assert asked["resultType"] == "input_required", asked
    assert asked["inputRequests"]["user_name"]["method"] == "elicitation/create"
    assert asked.get("hasRequestState") is True
    assert "inputResponses" not in first
    assert retry["inputResponses"] == {
        "user_name": {"action": "accept", "content": {"name": "Alice"}}
    }
    assert retry.get("hasRequestState") is True  # the sealed state echoed back
    assert answers[retry["id"]]["result"]["resultType"] == "complete"
    # No server-to-client request on a modern connection: the input rode in the result.
    assert not [m for m in wire if m["dir"] == "recv" and "method" in m and "id" in m]
    assert report["elicitations"] == [
        {
            "requestId": "user_name",  # the inputRequests key, not a JSON-RPC id
            "message": "What is your name?",
            "schemaProperties": ["name"],
            "answered": {"name": "Alice"},
        }
    ]
    step = report["steps"]["input_round"]
    assert step == {"tool": tool, "isError": False, "texts": ["Hello, Alice!"]}


def _check_legacy_round(report: dict[str, Any]) -> None:
    """A real server-to-client elicitation/create inside the tools/call."""
    wire: list[dict[str, Any]] = report["wire"]
    server_requests = [m for m in wire if m["dir"] == "recv" and "method" in m and "id" in m]
    assert [m["method"] for m in server_requests] == ["elicitation/create"], server_requests
    request_id = server_requests[0]["id"]
    replies = [
        m for m in wire if m["dir"] == "send" and m.get("id") == request_id and "result" in m
    ]
    assert [m["result"].get("action") for m in replies] == ["accept"], replies
    assert [e["message"] for e in report["elicitations"]] == ["Please provide your information"]
    assert report["elicitations"][0]["requestId"] == request_id
    assert report["elicitations"][0]["schemaProperties"] == ["email", "username"]
    step = report["steps"]["input_round"]
    assert step["tool"] == "test_elicitation" and not step["isError"]
    assert len(step["texts"]) == 1 and step["texts"][0].startswith("User response:"), step
    assert "action=accept" in step["texts"][0] and "alice@example.com" in step["texts"][0]


@pytest.mark.parametrize(("transport", "mode"), CASES)
def test_official_python_client(
    transport: str,
    mode: str,
    official_python: str,
    tmp_path: Path,
    record_property: Any,
) -> None:
    server_log = tmp_path / "server.log"
    with contextlib.ExitStack() as stack:
        if transport == "http":
            url = stack.enter_context(everything_http(server_log))
            target = ["--url", url]
        elif transport == "sse":  # the same server: its default old-transport paths
            url = stack.enter_context(everything_http(server_log))
            target = ["--sse", url.removesuffix("/mcp") + "/sse"]
        else:
            target = ["--stdio", "--", sys.executable, str(EVERYTHING), "--transport", "stdio"]
        code, report, stderr = _run_client(official_python, ["--mode", mode, *target])

    record_property("negotiated", report.get("protocolVersion"))
    log = server_log.read_text() if server_log.exists() else ""
    context = (
        f"errors: {json.dumps(report.get('errors'), indent=1)}\n"
        f"wire: {json.dumps(report.get('wire', [])[-20:], indent=1)}\n"
        f"client stderr: {stderr[-3000:]}\nserver log: {log[-3000:]}"
    )
    assert code == 0 and not report["errors"], context
    assert report["transport"] == transport

    steps = report["steps"]
    assert "test_simple_text" in steps["list_tools"]["tools"], context
    assert steps["call_tool"] == {"isError": False, "texts": [SIMPLE_TEXT]}, context
    assert steps["read_resource"] == {"uris": ["test://static-text"], "texts": [STATIC_TEXT]}
    prompt = steps["get_prompt"]
    assert any(
        all(value in text for value in prompt["args"].values()) for text in prompt["texts"]
    ), prompt

    wire: list[dict[str, Any]] = report["wire"]
    sent = [m["method"] for m in _requests_sent(wire)]
    if mode == "legacy":
        assert report["protocolVersion"] == LEGACY and report["era"] == "legacy", context
        assert sent[0] == "initialize" and "server/discover" not in sent, sent
        assert report["serverInfo"] == {"name": "mcpgen-everything", "version": "1.0.0"}
        _check_legacy_round(report)
    else:
        # Pinned or negotiated, the modern era must be in force; `auto` must have got
        # there through the discover probe (not by falling back to initialize).
        assert report["protocolVersion"] == MODERN and report["era"] == "modern", context
        _check_modern_wire(wire, transport)
        if mode == "auto":
            assert report["handshake"] == "discover" and sent[0] == "server/discover", sent
            probe = _requests_sent(wire)[0]["id"]
            discovered = next(m for m in wire if m["dir"] == "recv" and m.get("id") == probe)
            assert MODERN in discovered["result"]["supportedVersions"], discovered
            assert report["serverInfo"] == {"name": "mcpgen-everything", "version": "1.0.0"}
        else:
            # A pinned version skips even the probe; the SDK synthesizes a minimal
            # discover result, so there is no server identity to read.
            assert report["handshake"] == "adopt" and "server/discover" not in sent, sent
        _check_mrtr_round(report)
