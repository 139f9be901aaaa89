"""Behind a TLS-terminating balancer (docs/guide/deployment.md, several hosts): uvicorn
believes `X-Forwarded-Proto` and `X-Forwarded-For` from an address in its
`forwarded_allow_ips` (loopback by default), so an app whose protected resource URL is
derived from the request names the `https://` URL the client used, and a tool sees the
client's address; from any other address the headers are ignored."""

from __future__ import annotations

from typing import Any

import httpx

from mcpgen import Context, Server
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from mcpgen.transports import uvicorn_server
from tests.transports.httpharness import body, modern_headers, running

PUBLIC = "localhost:8443"  # the name and port clients use, at the balancer


def app() -> Any:
    server = Server("behind")

    @server.tool
    def peer(ctx: Context) -> str:
        assert ctx.request is not None and ctx.request.client is not None
        return ctx.request.client[0]

    tokens = StaticTokenVerifier({"t": AccessToken(subject="ada")})
    return server.asgi_app(auth=AuthSettings(tokens))  # no resource: derived per request


def test_the_forwarded_scheme_and_client_reach_a_derived_resource_and_a_tool() -> None:
    forwarded = {"host": PUBLIC, "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7"}
    served = uvicorn_server(app(), "127.0.0.1", 0, log_level="warning")
    with running(served) as base, httpx.Client(timeout=30) as http:
        refused = http.post(f"{base}/mcp", content=body(1, "tools/list"),
                            headers={**modern_headers("tools/list"), **forwarded})  # fmt: skip
        assert refused.status_code == 401
        metadata = f"https://{PUBLIC}/.well-known/oauth-protected-resource/mcp"
        assert refused.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
        document = http.get(f"{base}/.well-known/oauth-protected-resource/mcp", headers=forwarded)
        assert document.json()["resource"] == f"https://{PUBLIC}/mcp"
        plain = http.get(
            f"{base}/.well-known/oauth-protected-resource/mcp", headers={"host": PUBLIC}
        )
        assert plain.json()["resource"] == f"http://{PUBLIC}/mcp"  # no header: what it saw
        call = body(2, "tools/call", {"name": "peer", "arguments": {}})
        headers = {**modern_headers("tools/call", "peer"), **forwarded, "authorization": "Bearer t"}
        answer = http.post(f"{base}/mcp", content=call, headers=headers)
        assert answer.json()["result"]["content"][0]["text"] == "203.0.113.7"


def test_headers_from_an_address_not_trusted_are_ignored() -> None:
    forwarded = {"host": PUBLIC, "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7"}
    served = uvicorn_server(
        app(), "127.0.0.1", 0, log_level="warning", forwarded_allow_ips="10.0.0.10"
    )
    with running(served) as base, httpx.Client(timeout=30) as http:
        document = http.get(f"{base}/.well-known/oauth-protected-resource/mcp", headers=forwarded)
        assert document.json()["resource"] == f"http://{PUBLIC}/mcp"
        call = body(2, "tools/call", {"name": "peer", "arguments": {}})
        headers = {**modern_headers("tools/call", "peer"), **forwarded, "authorization": "Bearer t"}
        answer = http.post(f"{base}/mcp", content=call, headers=headers)
        assert answer.json()["result"]["content"][0]["text"] == "127.0.0.1"
