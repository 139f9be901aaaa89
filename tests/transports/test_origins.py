"""Origins (issue 22): `Origin: null` is refused; local pages (`http://localhost:*`) are
let in by default only when the server listens on a loopback address; elsewhere only
the same origin or the listed `allowed_origins` are."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpgen import Server
from tests.transports.httpharness import body, modern_headers, serve


def discover(app: Any, bound: str, host: str, origin: str | None) -> int:
    """The status of a server/discover POST reaching `app` on a socket bound to `bound`."""

    async def main() -> int:
        headers = modern_headers("server/discover") | {"host": host}
        if origin is not None:
            headers["origin"] = origin

        async def bound_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            # The ASGI scope's `server`: the address the request came in on.
            await app({**scope, "server": (bound, 8000)}, receive, send)

        transport = httpx.ASGITransport(app=bound_app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as http:
            response = await http.post("/mcp", headers=headers, content=body(1, "server/discover"))
            return response.status_code

    return asyncio.run(main())


def app(**options: Any) -> Any:
    return Server("origins").asgi_app(**options)


@pytest.mark.parametrize("bound", ["127.0.0.1", "10.0.0.5"])
def test_origin_null_is_refused_wherever_the_server_listens(bound: str) -> None:
    host = "localhost:8000" if bound == "127.0.0.1" else "mcp.example:8000"
    assert discover(app(), bound, host, None) == 200
    assert discover(app(), bound, host, "null") == 403
    listed = app(allowed_origins=["null", "https://web.example"])  # listing it changes nothing
    assert discover(listed, bound, host, "null") == 403


def test_local_pages_are_let_in_only_by_a_local_server() -> None:
    local = "http://localhost:5173"
    assert discover(app(), "127.0.0.1", "localhost:8000", local) == 200
    assert discover(app(), "127.0.0.1", "localhost:8000", "http://127.0.0.1:6274") == 200
    # Bound to a public address, even with rebinding protection forced on, a page on
    # localhost is another origin: refused unless listed.
    public = app(dns_rebinding_protection=True, allowed_hosts=["mcp.example"])
    assert discover(public, "10.0.0.5", "mcp.example:8000", local) == 403
    assert discover(app(), "10.0.0.5", "mcp.example:8000", local) == 403
    assert discover(app(), "10.0.0.5", "mcp.example:8000", "http://mcp.example:8000") == 200
    listed = app(allowed_origins=[local])  # the configurable allow-list
    assert discover(listed, "10.0.0.5", "mcp.example:8000", local) == 200
    assert discover(listed, "10.0.0.5", "mcp.example:8000", "http://localhost:5174") == 403


def test_origin_null_over_a_real_socket() -> None:
    with serve(app()) as (url, _):
        headers = modern_headers("server/discover") | {"origin": "null"}
        refused = httpx.post(url, headers=headers, content=body(1, "server/discover"))
        assert refused.status_code == 403 and "null" in refused.json()["error"]["message"]
