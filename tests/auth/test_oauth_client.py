"""The OAuth client (mcpgen.auth.OAuth) against an in-process authorization server:
discovery order, PKCE, the resource indicator, issuer and `iss` checks, registration
preference, transport security."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpgen.auth import AuthorizationError, HeadlessRedirect, OAuth
from tests.auth.oauth_world import World, s256


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def oauth(world: World, **options: Any) -> OAuth:
    transport = world.transport()
    return OAuth(redirect=HeadlessRedirect(transport=transport), transport=transport, **options)


async def call(world: World, auth: httpx.Auth) -> httpx.Response:
    async with world.client(auth) as http:
        return await http.post(world.server_url, json={})


def fetched(world: World) -> list[str]:
    return [line.split(" ", 1)[1] for line in world.log if line.startswith("GET ")]


# -- discovery ---------------------------------------------------------------------------------
def test_the_linked_resource_metadata_is_fetched_first_and_alone() -> None:
    world = World(prm_location="linked")
    assert run(call(world, oauth(world))).status_code == 200
    assert fetched(world)[:2] == [
        "https://mcp.example.com/custom/prm.json",
        "https://as.example.com/.well-known/oauth-authorization-server",
    ]


def test_unlinked_metadata_is_probed_path_based_then_at_the_root() -> None:
    world = World(prm_location="root")
    assert run(call(world, oauth(world))).status_code == 200
    assert fetched(world)[:2] == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]


@pytest.mark.parametrize(
    ("kind", "tried"),
    [
        ("oauth", 1),
        ("openid-inserted", 2),
        ("openid-appended", 3),
    ],
)
def test_server_metadata_of_an_issuer_with_a_path_in_the_spec_order(kind: str, tried: int) -> None:
    world = World(issuer="https://as.example.com/tenant1", metadata_kind=kind)
    assert run(call(world, oauth(world))).status_code == 200
    order = [
        "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://as.example.com/.well-known/openid-configuration/tenant1",
        "https://as.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert fetched(world)[1 : 1 + tried] == order[:tried]


def test_a_resource_metadata_naming_another_resource_is_refused() -> None:
    world = World(prm_resource="https://evil.example.com/mcp")
    with pytest.raises(AuthorizationError, match="evil"):
        run(call(world, oauth(world)))
    assert world.authorizations == []


@pytest.mark.parametrize("resource", ["https://mcp.example.com/mcp/", "https://mcp.example.co"])
def test_resource_is_compared_without_normalisation(resource: str) -> None:
    world = World(prm_resource=resource)
    with pytest.raises(AuthorizationError):
        run(call(world, oauth(world)))


def test_metadata_with_another_issuer_is_refused() -> None:
    world = World(metadata_issuer="https://attacker.example.com")
    with pytest.raises(AuthorizationError, match="attacker"):
        run(call(world, oauth(world)))
    assert world.authorizations == [] and world.registrations == []


def test_plain_http_authorization_endpoints_are_refused_except_on_loopback() -> None:
    world = World(authorization_endpoint="http://as.example.com/authorize")
    with pytest.raises(AuthorizationError, match="not HTTPS"):
        run(call(world, oauth(world)))
    local = World(server_url="http://127.0.0.1:9/mcp", issuer="http://localhost:9")
    assert run(call(local, oauth(local))).status_code == 200


# -- the authorization and token requests ------------------------------------------------------
def test_pkce_s256_and_the_resource_exactly_as_published() -> None:
    # A path-less resource: a URL parser would add "/" to it.
    world = World(prm_resource="https://mcp.example.com", prm_location="root")
    assert run(call(world, oauth(world))).status_code == 200
    (asked,) = world.authorizations
    (token,) = world.token_requests
    assert asked["code_challenge_method"] == "S256"
    assert s256(token["code_verifier"]) == asked["code_challenge"]
    assert asked["resource"] == token["resource"] == "https://mcp.example.com"
    assert len(token["code_verifier"]) >= 43


def test_iss_matching_the_issuer_is_accepted() -> None:
    world = World(iss_supported=True, iss_mode="correct")
    assert run(call(world, oauth(world))).status_code == 200


def test_no_iss_without_advertising_it_is_accepted() -> None:
    world = World(iss_supported=None, iss_mode="omit")
    assert run(call(world, oauth(world))).status_code == 200


@pytest.mark.parametrize(
    ("supported", "mode"),
    [
        (True, "omit"),  # advertised but missing
        (True, "wrong"),
        (None, "wrong"),  # compared even when not advertised
        (True, "slash"),  # a string compare: no normalisation
    ],
)
def test_a_bad_iss_stops_before_the_token_request(supported: bool | None, mode: str) -> None:
    world = World(iss_supported=supported, iss_mode=mode)
    with pytest.raises(AuthorizationError, match=r"iss|comes from"):
        run(call(world, oauth(world)))
    assert len(world.authorizations) == 1 and world.token_requests == []


def test_an_answer_with_a_foreign_state_is_refused() -> None:
    world = World(state_override="someone-elses-state")
    with pytest.raises(AuthorizationError, match="foreign state"):
        run(call(world, oauth(world)))
    assert world.token_requests == []


# -- registration ------------------------------------------------------------------------------
def test_dynamic_registration_as_a_native_client() -> None:
    world = World()
    run(call(world, oauth(world, client_name="tester")))
    (registered,) = world.registrations
    assert registered["application_type"] == "native"
    assert registered["redirect_uris"] == ["http://localhost:3000/callback"]
    assert registered["grant_types"] == ["authorization_code", "refresh_token"]
    assert registered["client_name"] == "tester"
    assert registered["token_endpoint_auth_method"] == "none"


def test_registration_covers_every_scope_the_resource_names() -> None:
    """The challenge asks for `read` only, but the resource also names `admin`: the
    registration asks for both, so a later step-up is not refused by a server that
    holds clients to their registered scope; the authorization asks for `read` only."""
    world = World(challenge_scope="read", prm_scopes=["read", "admin"])
    run(call(world, oauth(world)))
    (registered,) = world.registrations
    assert registered["scope"] == "read admin"
    (authorization,) = world.authorizations
    assert authorization["scope"] == "read"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_the_token_endpoint_authentication_offered_is_used(method: str) -> None:
    world = World(auth_methods=[method])
    assert run(call(world, oauth(world))).status_code == 200
    (token,) = world.token_requests
    assert token["_authorization"].startswith("Basic ") == (method == "client_secret_basic")
    assert ("client_secret" in token) == (method == "client_secret_post")


def test_pre_registered_credentials_come_first() -> None:
    world = World(cimd=True, auth_methods=["client_secret_basic"])
    world.clients["pre"] = "s3cret"
    auth = oauth(world, client_id="pre", client_secret="s3cret", client_metadata_url="https://c/m")
    assert run(call(world, auth)).status_code == 200
    assert world.registrations == []
    assert world.authorizations[0]["client_id"] == "pre"


def test_a_client_id_metadata_document_before_dynamic_registration() -> None:
    world = World(cimd=True)
    auth = oauth(world, client_metadata_url="https://client.example/meta.json")
    assert run(call(world, auth)).status_code == 200
    assert world.registrations == []
    assert world.authorizations[0]["client_id"] == "https://client.example/meta.json"


def test_without_registration_or_credentials_the_error_says_what_to_pass() -> None:
    world = World(registration=False)
    with pytest.raises(AuthorizationError, match="client_id"):
        run(call(world, oauth(world)))
