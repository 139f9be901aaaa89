"""The official TypeScript MCP clients against `examples/everything.py`.

* `@modelcontextprotocol/client` (the v2 SDK's client package) with its
  `versionNegotiation.mode` set to `legacy` (the 2025 `initialize` handshake), pinned
  `2026-07-28` (`{pin: "2026-07-28"}`, no fallback) and `auto` (a `server/discover` probe
  that must pick 2026-07-28 against this server);
* `@modelcontextprotocol/sdk` 1.x, which knows only the 2025-era handshake;

each over stdio and over Streamable HTTP. Every case lists tools, calls a tool, reads a
resource, gets a prompt with arguments and completes one input round: on a 2026-07-28
connection an input-required result (MRTR) that the v2 client fulfils itself through its
`elicitation/create` handler and retries; on a legacy connection a real server-to-client
`elicitation/create` request answered by that handler.

The Node scripts (`npm_client_v2.mjs`, `npm_client_v1.mjs`, sharing `npm_common.mjs`)
print one JSON document with the outcome and a trace of every JSON-RPC message the client
transport carried; the assertions below check both the API-level results and the wire.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.processes import EVERYTHING, everything_http
from tests.tooling import node22, npm_package

HERE = Path(__file__).resolve().parent

# Pinned exact versions (the newest published when these tests were written; v1: the
# newest 1.x release).
V2_CLIENT = "@modelcontextprotocol/client@2.4.0"
V1_SDK = "@modelcontextprotocol/sdk@1.32.2"

MODERN = "2026-07-28"
# The newest 2025-era revision; both clients offer it in `initialize` and the server has it.
LEGACY = "2025-11-25"

CLIENT_TIMEOUT_S = 120
REQUEST_TIMEOUT_MS = 30_000
SERVER_START_S = 30.0

pytestmark = pytest.mark.needs_node

JsonObj = dict[str, Any]


@pytest.fixture(scope="module")
def node() -> str:
    return node22()


@pytest.fixture(scope="module")
def v2_modules() -> Path:
    return npm_package(V2_CLIENT)


@pytest.fixture(scope="module")
def v1_modules() -> Path:
    return npm_package(V1_SDK)


def _run_client(node: str, script: str, config: JsonObj, server_log: Path | None) -> JsonObj:
    try:
        proc = subprocess.run(
            [node, str(HERE / script), json.dumps(config)],
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            cwd=HERE,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{script} ran past {CLIENT_TIMEOUT_S} s (killed): stderr {exc.stderr!r}")
    context = f"stderr:\n{proc.stderr[-4000:]}"
    if server_log is not None and server_log.exists():
        context += f"\nserver log:\n{server_log.read_text()[-4000:]}"
    try:
        doc: JsonObj = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(
            f"{script} exited {proc.returncode} without one JSON document on stdout:\n"
            f"{proc.stdout[-4000:]}\n{context}"
        )
    if proc.returncode != 0 or not doc.get("ok"):
        trace = json.dumps(doc.get("trace", [])[-12:], indent=1)[-6000:]
        pytest.fail(
            f"{script} exited {proc.returncode}: {doc.get('error')}\n"
            f"last messages on the wire:\n{trace}\n{context}"
        )
    return doc


def _run(
    node: str, script: str, modules: Path, transport: str, mode: str, tmp_path: Path
) -> JsonObj:
    config: JsonObj = {
        "nodeModules": str(modules),
        "transport": transport,
        "mode": mode,
        "timeoutMs": REQUEST_TIMEOUT_MS,
    }
    if transport == "stdio":
        config["command"] = sys.executable
        config["args"] = [str(EVERYTHING), "--transport", "stdio"]
        return _run_client(node, script, config, None)
    log = tmp_path / "server.log"
    with everything_http(log) as url:
        config["url"] = url
        return _run_client(node, script, config, log)


def _sent(doc: JsonObj, method: str) -> list[JsonObj]:
    return [
        e["message"]
        for e in doc["trace"]
        if e["dir"] == "client->server" and e["message"].get("method") == method
    ]


def _response(doc: JsonObj, request: JsonObj) -> JsonObj:
    for e in doc["trace"]:
        message: JsonObj = e["message"]
        if (
            e["dir"] == "server->client"
            and "method" not in message
            and message.get("id") == request["id"]
        ):
            return message
    raise AssertionError(f"no response to {request}")


def _check_common(doc: JsonObj) -> None:
    assert "test_simple_text" in doc["tools"]
    assert doc["simpleText"] == ["This is a simple text response for testing."]
    assert doc["resourceText"] == ["This is the content of the static text resource."]
    assert any("alpha" in t and "beta" in t for t in doc["promptTexts"]), doc["promptTexts"]
    assert doc["server"] == {"name": "mcpgen-everything", "version": "1.0.0"}
    # Out-of-band client errors are tolerated only while closing, and only aborts: over
    # HTTP, client.close() aborts its own fetches still in flight (e.g. the POST carrying an
    # elicitation answer whose 202 had not arrived yet, as the tool result raced it on the
    # SSE stream), and both SDKs report that abort through onerror.
    assert [e for e in doc["clientErrors"] if e["phase"] != "close"] == []
    assert all(e["error"].startswith("AbortError") for e in doc["clientErrors"]), doc[
        "clientErrors"
    ]


def _check_legacy(doc: JsonObj) -> None:
    assert doc["era"] == "legacy"
    assert doc["protocolVersion"] == LEGACY
    assert doc["initializeProtocolVersion"] == LEGACY
    assert doc["sentInitialize"] and not doc["sentDiscover"]
    # Nothing 2026-era leaks onto a legacy connection in either direction.
    for e in doc["trace"]:
        params = e["message"].get("params") or {}
        assert "io.modelcontextprotocol/protocolVersion" not in (params.get("_meta") or {}), e
        assert (e["message"].get("result") or {}).get("resultType") != "input_required", e
    # The input round: one real server->client elicitation/create, answered by the handler.
    assert doc["serverRequests"] == ["elicitation/create"]
    (asked,) = doc["inputRound"]["elicitations"]
    assert asked["message"] == "Please provide your information"
    assert set(asked["requestedSchema"]["properties"]) == {"username", "email"}
    (final,) = doc["inputRound"]["texts"]
    assert final.startswith("User response:"), final
    assert '"username": "testuser"' in final and '"email": "test@example.com"' in final
    answers = [
        e["message"]
        for e in doc["trace"]
        if e["dir"] == "client->server" and "method" not in e["message"]
    ]
    (answer,) = answers
    assert answer["result"] == {
        "action": "accept",
        "content": {"username": "testuser", "email": "test@example.com"},
    }


def _check_modern(doc: JsonObj, transport: str) -> None:
    assert doc["era"] == "modern"
    assert doc["protocolVersion"] == MODERN
    assert MODERN in doc["discoverVersions"]
    assert not doc["sentInitialize"]
    # Over HTTP the probe runs on the connection itself; over stdio the v2 client probes a
    # short-lived sibling process and then starts the session process already modern.
    assert doc["sentDiscover"] == (transport == "http")
    # 2026-07-28 has no server->client requests: input comes as input_required results.
    assert doc["serverRequests"] == []
    calls = [
        m
        for m in _sent(doc, "tools/call")
        if m["params"]["name"] == "test_input_required_result_elicitation"
    ]
    assert len(calls) == 2, calls
    first, retry = calls
    assert first["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    asked = _response(doc, first)["result"]
    assert asked["resultType"] == "input_required", asked
    assert asked["inputRequests"]["user_name"]["method"] == "elicitation/create"
    assert retry["id"] != first["id"]
    assert retry["params"]["requestState"] == asked["requestState"]
    assert retry["params"]["inputResponses"] == {
        "user_name": {"action": "accept", "content": {"name": "Alice"}}
    }
    assert _response(doc, retry)["result"]["resultType"] == "complete"
    (elicited,) = doc["inputRound"]["elicitations"]
    assert elicited["message"] == "What is your name?"
    assert doc["inputRound"]["texts"] == ["Hello, Alice!"]
    assert doc["inputRound"]["isError"] is False


TRANSPORTS = ["stdio", "http"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_v2_client(node: str, v2_modules: Path, transport: str, mode: str, tmp_path: Path) -> None:
    doc = _run(node, "npm_client_v2.mjs", v2_modules, transport, mode, tmp_path)
    assert doc["sdk"] == "@modelcontextprotocol/client"
    _check_common(doc)
    if mode == "legacy":
        _check_legacy(doc)
    else:
        # Pinned and auto alike must land on 2026-07-28: the server offers it in
        # server/discover, so `auto` has definitive modern evidence and does not fall back.
        _check_modern(doc, transport)


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_v1_sdk_client(node: str, v1_modules: Path, transport: str, tmp_path: Path) -> None:
    # v1 has no version negotiation knob: it only ever speaks the 2025 handshake.
    doc = _run(node, "npm_client_v1.mjs", v1_modules, transport, "legacy", tmp_path)
    assert doc["sdk"] == "@modelcontextprotocol/sdk"
    assert doc["clientLatestProtocolVersion"] == LEGACY
    _check_common(doc)
    _check_legacy(doc)
