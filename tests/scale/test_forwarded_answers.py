"""A legacy client's answers (JSON-RPC responses) travel to every worker, where the
bridge that sent the request acts on them; what else their POST holds does not. A
2025-03-26 batch that mixes an answer with a request runs that request once, on the
worker it reached, not once more on every worker that holds the session."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import httpx
import pytest

from mcpgen import Server
from mcpgen.transports._replies import answers
from tests.scale.harness import KEY, fresh_redis_url
from tests.transports.httpharness import serve

pytestmark = pytest.mark.needs_redis

LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _build(url: str, runs: list[str]) -> Server:
    server = Server("answers", state_keys=[KEY], redis=url)

    @server.tool(threaded=False)  # runs inline, in the frame's own receive
    def count(tag: str) -> int:
        runs.append(tag)
        return len(runs)

    return server


def test_a_batch_with_an_answer_and_a_request_runs_the_request_once() -> None:
    url, runs = fresh_redis_url(), list[str]()
    with contextlib.ExitStack() as stack, httpx.Client(timeout=10) as http:
        urls = [stack.enter_context(serve(_build(url, runs).asgi_app()))[0] for _ in range(3)]
        hello = {"protocolVersion": "2025-03-26", "capabilities": {}}
        hello["clientInfo"] = {"name": "t", "version": "1"}
        opened = http.post(
            urls[0],
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            headers=LEGACY,
        )
        session = {**LEGACY, "mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-03-26"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(urls[0], json=initialized, headers=session)
        for each in urls:  # the session is live on every worker
            ping = http.post(
                each, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=session
            )
            assert ping.status_code == 200
        call = {"name": "count", "arguments": {"tag": "once"}}
        batch: list[dict[str, Any]] = [
            {"jsonrpc": "2.0", "id": 999, "result": {}},  # an answer (to nothing asked)
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        ]
        reply = http.post(urls[0], json=batch, headers=session)
        assert reply.status_code == 200 and reply.json()[0]["id"] == 2
        time.sleep(1.0)  # what the bus carried has reached the other workers
    assert runs == ["once"]


def test_only_the_answers_of_a_post_are_forwarded() -> None:
    one = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    request = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}'
    note = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
    assert answers(one) == one
    assert answers(request) is None and answers(b"[" + request + b"]") is None
    assert answers(b"[" + one + b"," + one + b"]") == b"[" + one + b"," + one + b"]"
    assert answers(b"[" + one + b"," + request + b"," + note + b"]") == b"[" + one + b"]"
    assert answers(b'["result", 5, ' + one + b"]") == b"[" + one + b"]"
    assert answers(b'{"result": [') is None
