"""A bug inside the core (an exception out of the session's frame handling) becomes a
JSON-RPC internal-error reply on every transport: logged with its traceback, nothing
of it sent to the client, the connection kept."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
import pytest

from mcpgen import Server
from mcpgen._server._session import Session
from mcpgen.transports import MemoryConnection
from tests.transports.httpharness import body, modern_headers

SECRET = "secret detail of the bug"


def break_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on requests (not notifications) hit a bug in the core."""

    def fail(*_: Any) -> Any:
        raise RuntimeError(SECRET)

    monkeypatch.setattr(Session, "_request", fail)


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> None:
    break_core(monkeypatch)


def make_server() -> Server:
    server = Server("failing")

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


def assert_internal_error(reply: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    assert reply == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "internal error"}}
    (record,) = [r for r in caplog.records if r.name == "mcpgen.server"]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None and SECRET in str(record.exc_info[1])


def post(app: Any, data: bytes, method: str, **headers: str) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post(
                "/mcp", content=data, headers={**modern_headers(method), **headers}
            )

    return asyncio.run(run())


@pytest.mark.usefixtures("broken")
def test_http_answers_a_core_failure_with_a_json_rpc_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_server().asgi_app(dns_rebinding_protection=False)
    response = post(app, body(1, "tools/list"), "tools/list")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert SECRET not in response.text and "Traceback" not in response.text
    assert_internal_error(response.json(), caplog)


def test_http_legacy_session_survives_a_core_failure(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_server().asgi_app(dns_rebinding_protection=False)
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    legacy = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    opened = post(app, body(0, "initialize", init, meta=False), "initialize", **legacy)
    session_id = opened.headers["mcp-session-id"]
    break_core(monkeypatch)
    failed = post(
        app,
        body(1, "tools/list", meta=False),
        "tools/list",
        **legacy,
        **{"mcp-session-id": session_id},
    )
    assert failed.status_code == 200
    assert_internal_error(failed.json(), caplog)
    monkeypatch.undo()
    listed = post(
        app,
        body(2, "tools/list", meta=False),
        "tools/list",
        **legacy,
        **{"mcp-session-id": session_id},
    )
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["echo"]


@pytest.mark.usefixtures("broken")
def test_memory_answers_a_core_failure_with_a_json_rpc_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def run() -> dict[str, Any]:
        connection = MemoryConnection(make_server())
        await connection.send(body(1, "tools/list"))
        reply: dict[str, Any] = json.loads(await connection.receive())
        await connection.close()
        return reply

    assert_internal_error(asyncio.run(run()), caplog)
