"""A protected server's refusals (401, 403: OAuth-style JSON bodies, not JSON-RPC)
reach a client that has no auth flow as `HttpStatusError`, with the status and the
`WWW-Authenticate` challenge in the message, in both eras."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpgen import Client, HttpStatusError, Server
from mcpgen.auth import AuthSettings, StaticTokenVerifier
from tests.transports.httpharness import serve

URL = "http://127.0.0.1:8000/mcp"


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def app() -> Any:
    server = Server("guarded")

    @server.tool
    def hello() -> str:
        """Says hello."""
        return "hello"

    @server.tool(scopes=["admin"])
    def purge() -> str:
        """Administrators only."""
        return "purged"

    verifier = StaticTokenVerifier({"t-user": ["read"]})
    return server.asgi_app(auth=AuthSettings(verifier, resource=URL))


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_no_token_is_an_http_status_error(era: str) -> None:
    async def main() -> HttpStatusError:
        transport = httpx.ASGITransport(app=app())
        async with httpx.AsyncClient(transport=transport) as http:
            with pytest.raises(HttpStatusError) as caught:
                async with Client.http(URL, httpx_client=http, era=era) as client:  # type: ignore[arg-type]
                    await client.list_tools()
            return caught.value

    error = run(main())
    assert error.status == 401
    assert "HTTP 401" in str(error)
    assert 'WWW-Authenticate: Bearer resource_metadata="http://127.0.0.1:8000/' in str(error)


# Over real HTTP (uvicorn), not httpx.ASGITransport: that transport hands back a
# response only once the app has finished it, so a legacy session's standalone GET
# stream (open for the session's life) never answers there and the client waits its
# 5 s for it before going on.
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_insufficient_scope_is_an_http_status_error(era: str) -> None:
    async def main(url: str) -> tuple[str, HttpStatusError]:
        headers = {"authorization": "Bearer t-user"}
        async with Client.http(url, era=era, headers=headers) as client:  # type: ignore[arg-type]
            allowed = await client.call_tool("hello")
            with pytest.raises(HttpStatusError) as caught:
                await client.call_tool("purge")
            # The connection stays usable after the refusal.
            again = await client.call_tool("hello")
            assert again.content == allowed.content
        return str(allowed.content[0].text), caught.value  # type: ignore[union-attr]

    with serve(app()) as (url, _):
        text, error = run(main(url))
    assert text == "hello"
    assert error.status == 403
    assert 'error="insufficient_scope"' in str(error) and 'scope="admin' in str(error)
    assert "insufficient_scope" in error.body
