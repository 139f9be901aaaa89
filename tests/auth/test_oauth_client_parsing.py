"""The pieces of discovery that read what servers send: Bearer challenges, the
resource check, the well-known URLs; and signing in ahead of the first request."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mcpgen.auth import HeadlessRedirect, OAuth
from mcpgen.auth._discovery import (
    parse_challenge,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)
from tests.auth.oauth_world import World


def challenge_of(*values: str) -> tuple[str | None, str | None, str | None]:
    found = parse_challenge(httpx.Headers([("www-authenticate", v) for v in values]))
    return found.error, found.scope, found.resource_metadata


def test_a_bearer_challenge_with_quoted_values() -> None:
    value = (
        'Bearer error="insufficient_scope", scope="files:read files:write",'
        ' resource_metadata="https://r.example/.well-known/oauth-protected-resource/a,b"'
    )
    assert challenge_of(value) == (
        "insufficient_scope",
        "files:read files:write",
        "https://r.example/.well-known/oauth-protected-resource/a,b",
    )


def test_the_bearer_challenge_among_others() -> None:
    assert challenge_of('Basic realm="x", Bearer scope="a", DPoP algs="ES256"') == (
        None,
        "a",
        None,
    )
    assert challenge_of('Basic realm="bearer"', "Bearer scope=b") == (None, "b", None)
    assert challenge_of('Basic realm="x"') == (None, None, None)


@pytest.mark.parametrize(
    ("resource", "url", "covers"),
    [
        ("https://a.example/mcp", "https://a.example/mcp", True),
        ("https://a.example", "https://a.example/mcp", True),
        ("https://a.example/", "https://a.example/mcp", True),
        ("https://a.example/mcp/", "https://a.example/mcp", False),
        ("https://a.example/mc", "https://a.example/mcp", False),
        ("https://a.example/mcp", "https://a.example/mcp/sub", True),
        ("https://a.example.evil", "https://a.example/mcp", False),
        ("https://A.example/mcp", "https://a.example/mcp", False),
    ],
)
def test_resource_covers_by_string_and_segment(resource: str, url: str, covers: bool) -> None:
    assert resource_covers(resource, url) is covers


def test_well_known_urls() -> None:
    assert resource_metadata_urls("https://r.example/v1/mcp", None) == [
        "https://r.example/.well-known/oauth-protected-resource/v1/mcp",
        "https://r.example/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://r.example", "https://x/prm") == [
        "https://x/prm",
        "https://r.example/.well-known/oauth-protected-resource",
    ]
    assert server_metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]


def test_login_authorizes_before_the_first_request() -> None:
    world = World(prm_location="path", prm_scopes=["mcp:basic"])
    transport = world.transport()
    auth = OAuth(redirect=HeadlessRedirect(transport=transport), transport=transport)

    async def main() -> int:
        grant = await auth.login(world.server_url)
        assert grant.scope == "mcp:basic" and grant.resource == world.server_url
        async with world.client(auth) as http:
            return (await http.post(world.server_url, json={})).status_code

    assert asyncio.run(main()) == 200
    assert len(world.authorizations) == 1
    # One POST to the server: it carried the token, no 401 came first.
    assert [line for line in world.log if line.startswith("POST https://mcp")] == [
        f"POST {world.server_url}"
    ]
