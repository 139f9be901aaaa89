"""CORS for browser clients: preflights and actual responses of every endpoint answer a
listed origin (and only it), errors and streams included; anything else gets no
`Access-Control-*` header."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpgen import Context, Server
from mcpgen.auth import AuthSettings, StaticTokenVerifier
from tests.transports.asgidriver import Exchange
from tests.transports.httpharness import body, modern_headers, rpc

BASE = "http://127.0.0.1:8000"
WEB = "http://127.0.0.1:5173"  # the page's origin, listed
EVIL = "http://127.0.0.1.evil.example"
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def make_server() -> Server:
    server = Server("cors")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def slow(ctx: Context) -> str:
        ctx.progress(1, 2)  # a notification first: the answer is an SSE stream
        await asyncio.sleep(0)
        return "done"

    return server


def app(**options: Any) -> Any:
    options.setdefault("allowed_origins", [WEB])
    return make_server().asgi_app(**options)


def protected() -> Any:
    verifier = StaticTokenVerifier({"t-user": ["read"]})
    auth = AuthSettings(verifier, resource=f"{BASE}/mcp")
    return make_server().asgi_app(allowed_origins=[WEB], auth=auth)


def call(asgi: Any, method: str, path: str, headers: dict[str, str], data: bytes = b"") -> Any:
    async def main() -> httpx.Response:
        transport = httpx.ASGITransport(app=asgi)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
            return await http.request(method, path, headers=headers, content=data)

    return asyncio.run(asyncio.wait_for(main(), 20))


def preflight(
    asgi: Any, path: str, origin: str = WEB, method: str = "POST", asked: str = ""
) -> Any:
    headers = {"origin": origin, "access-control-request-method": method}
    if asked:
        headers["access-control-request-headers"] = asked
    return call(asgi, "OPTIONS", path, headers)


def cors_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.startswith("access-control-")}


def assert_allowed(response: httpx.Response) -> None:
    """An actual response the page may read, with the headers a client must read."""
    assert response.headers["access-control-allow-origin"] == WEB
    exposed = {h.strip() for h in response.headers["access-control-expose-headers"].split(",")}
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= exposed
    assert "origin" in response.headers["vary"].lower()
    assert "access-control-allow-credentials" not in response.headers


# -- preflight -----------------------------------------------------------------------------------
def test_preflight_of_the_mcp_endpoint_allows_the_listed_origin() -> None:
    asked = "content-type, mcp-protocol-version, mcp-method, mcp-name, Mcp-Param-City, x-other"
    response = preflight(app(), "/mcp", asked=asked)
    assert response.status_code == 204
    assert response.content == b""
    h = response.headers
    assert h["access-control-allow-origin"] == WEB  # echoed, never "*"
    assert h["access-control-allow-methods"] == "GET, POST, DELETE"
    allowed = {name.strip() for name in h["access-control-allow-headers"].split(",")}
    assert {
        "content-type",
        "accept",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
        "mcp-param-city",  # a mirrored parameter, asked for: echoed
    } <= allowed
    assert "x-other" not in allowed
    assert int(h["access-control-max-age"]) > 0
    assert "origin" in h["vary"].lower()
    assert "access-control-allow-credentials" not in h


@pytest.mark.parametrize(("path", "methods"), [("/sse", "GET"), ("/messages", "POST")])
def test_preflight_of_the_http_sse_endpoints(path: str, methods: str) -> None:
    response = preflight(app(), path, method=methods)
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == WEB
    assert response.headers["access-control-allow-methods"] == methods


def test_preflight_of_a_protected_endpoint_needs_no_token() -> None:
    response = preflight(protected(), "/mcp", asked="authorization, content-type")
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == WEB
    assert "authorization" in response.headers["access-control-allow-headers"]


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_preflight_and_get_of_the_resource_metadata(path: str) -> None:
    response = preflight(protected(), path, method="GET")
    assert response.status_code == 204
    assert response.headers["access-control-allow-methods"] == "GET"
    document = call(protected(), "GET", path, {"origin": WEB})
    assert document.status_code == 200
    assert document.json()["resource"] == f"{BASE}/mcp"
    assert_allowed(document)


@pytest.mark.parametrize("origin", [EVIL, "http://localhost:5173", "null"])
def test_preflight_from_an_origin_not_listed_is_refused_without_cors(origin: str) -> None:
    response = preflight(app(allowed_origins=[WEB, "null"]), "/mcp", origin=origin)
    assert response.status_code == 403  # `null` too, even listed: any page can send it
    assert cors_headers(response) == {}


def test_preflight_with_a_host_the_app_refuses_is_refused() -> None:
    headers = {"origin": WEB, "access-control-request-method": "POST", "host": "evil.example"}
    response = call(app(), "OPTIONS", "/mcp", headers)
    assert response.status_code == 403
    assert cors_headers(response) == {}


@pytest.mark.parametrize(
    "options", [{"allowed_origins": None}, {"cors": False}], ids=["loopback default", "cors off"]
)
def test_no_cors_unless_origins_are_listed(options: dict[str, Any]) -> None:
    """The loopback default lets a local page's origin pass the rebinding check, but only
    a listed origin is invited to call from a browser."""
    origin = "http://localhost:5173" if options.get("allowed_origins", 1) is None else WEB
    response = preflight(app(**options), "/mcp", origin=origin)
    assert response.status_code == 405  # as before: OPTIONS is no MCP method
    assert cors_headers(response) == {}
    posted = call(
        app(**options),
        "POST",
        "/mcp",
        {**modern_headers("tools/call", "echo"), "origin": origin},
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    )
    assert posted.status_code == 200
    assert cors_headers(posted) == {}


def test_an_unknown_path_is_still_404() -> None:
    """A preflight is answered on the app's endpoints only."""
    for asgi in (app(), protected()):
        response = preflight(asgi, "/elsewhere")
        assert response.status_code == 404
        assert "access-control-allow-methods" not in response.headers


# -- actual responses ------------------------------------------------------------------------------
def test_a_modern_json_reply_is_readable() -> None:
    response = call(
        app(),
        "POST",
        "/mcp",
        {**modern_headers("tools/call", "echo"), "origin": WEB},
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"] == "hi"
    assert_allowed(response)


def test_a_modern_sse_reply_is_readable() -> None:
    response = call(
        app(),
        "POST",
        "/mcp",
        {**modern_headers("tools/call", "slow"), "origin": WEB},
        body(1, "tools/call", {"name": "slow", "arguments": {}}, progressToken=1),
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert b'"done"' in response.content
    assert_allowed(response)


def test_a_legacy_session_id_is_exposed() -> None:
    response = call(app(), "POST", "/mcp", {**LEGACY, "origin": WEB}, rpc(1, "initialize", INIT))
    assert response.status_code == 200
    assert response.headers["mcp-session-id"]
    assert_allowed(response)


@pytest.mark.parametrize(
    ("headers", "data", "status"),
    [
        ({**modern_headers("tools/list")}, body(1, "tools/list", meta=False), 400),
        (
            {**LEGACY, "mcp-session-id": "gone", "mcp-protocol-version": "2025-11-25"},
            rpc(2, "tools/list"),
            404,  # an unknown session
        ),
        ({"content-type": "text/plain", "accept": "application/json"}, b"{}", 415),
    ],
    ids=["bad _meta", "unknown session", "wrong content type"],
)
def test_error_responses_are_readable(headers: dict[str, str], data: bytes, status: int) -> None:
    response = call(app(), "POST", "/mcp", {**headers, "origin": WEB}, data)
    assert response.status_code == status
    assert_allowed(response)


def test_a_401_challenge_is_readable() -> None:
    response = call(
        protected(),
        "POST",
        "/mcp",
        {**modern_headers("tools/list"), "origin": WEB},
        body(1, "tools/list"),
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert_allowed(response)


def test_a_request_from_an_origin_not_listed_gets_403_without_cors() -> None:
    response = call(
        app(),
        "POST",
        "/mcp",
        {**modern_headers("tools/list"), "origin": EVIL},
        body(1, "tools/list"),
    )
    assert response.status_code == 403
    assert cors_headers(response) == {}


def test_the_http_sse_stream_is_readable() -> None:
    async def main() -> tuple[int, dict[str, str], dict[str, str] | None]:
        exchange = Exchange(app(), "GET", {"accept": "text/event-stream", "origin": WEB})
        exchange.scope["path"] = "/sse"  # before the app first runs
        status, headers = await exchange.start()
        first = await exchange.block()
        await exchange.disconnect()
        return status, headers, first

    status, headers, first = asyncio.run(main())
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers["access-control-allow-origin"] == WEB
    assert "mcp-session-id" in headers["access-control-expose-headers"]
    assert first is not None and first["event"] == "endpoint"
    assert first["data"].startswith("/messages?session_id=")


def test_a_message_post_of_the_http_sse_transport_is_readable() -> None:
    response = call(app(), "POST", "/messages", {**LEGACY, "origin": WEB}, rpc(1, "ping"))
    assert response.status_code == 400  # no session_id
    assert_allowed(response)


def test_behind_auth_an_authorized_reply_is_readable() -> None:
    headers = {**modern_headers("tools/call", "echo"), "origin": WEB}
    response = call(
        protected(),
        "POST",
        "/mcp",
        {**headers, "authorization": "Bearer t-user"},
        body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    )
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "hi"
    assert_allowed(response)


def test_behind_auth_an_origin_not_listed_gets_no_cors() -> None:
    response = preflight(protected(), "/mcp", origin=EVIL)
    assert response.status_code == 401  # the gate, as without CORS: no token
    assert cors_headers(response) == {}
    metadata = preflight(protected(), "/.well-known/oauth-protected-resource/mcp", origin=EVIL)
    assert metadata.status_code == 405
    assert cors_headers(metadata) == {}
