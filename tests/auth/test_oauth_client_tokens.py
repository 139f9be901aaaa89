"""The OAuth client's tokens over time: scopes and step-up, refresh (after a restart
too), storage, concurrency, authorization-server migration, client credentials."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt
from joserfc.jwk import ECKey

from mcpgen.auth import (
    AuthorizationError,
    ClientCredentials,
    FileTokenStorage,
    Grant,
    HeadlessRedirect,
    InMemoryTokenStorage,
    OAuth,
)
from tests.auth.oauth_world import World


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def oauth(world: World, **options: Any) -> OAuth:
    transport = world.transport()
    return OAuth(redirect=HeadlessRedirect(transport=transport), transport=transport, **options)


async def call(world: World, auth: httpx.Auth) -> httpx.Response:
    async with world.client(auth) as http:
        return await http.post(world.server_url, json={})


def scopes_asked(world: World) -> list[str | None]:
    return [a.get("scope") for a in world.authorizations]


# -- scopes ------------------------------------------------------------------------------------
def test_scopes_from_the_challenge_first() -> None:
    world = World(challenge_scope="mcp:read", prm_scopes=["mcp:profile"])
    run(call(world, oauth(world)))
    assert scopes_asked(world) == ["mcp:read"]


def test_scopes_from_the_resource_metadata_next_then_none() -> None:
    world = World(prm_scopes=["mcp:a", "mcp:b"])
    run(call(world, oauth(world)))
    bare = World()
    run(call(bare, oauth(bare)))
    assert scopes_asked(world) == ["mcp:a mcp:b"]
    assert scopes_asked(bare) == [None]


def test_scopes_given_are_added_to_the_resource_metadata_ones() -> None:
    """`scopes=` adds to what the resource names; it does not replace it."""
    world = World(prm_scopes=["mcp:a"])
    run(call(world, oauth(world, scopes=["extra"])))
    challenged = World(challenge_scope="mcp:read", prm_scopes=["mcp:a"])
    run(call(challenged, oauth(challenged, scopes=["extra"])))
    assert scopes_asked(world) == ["extra mcp:a"]
    assert scopes_asked(challenged) == ["extra mcp:read"]


def test_offline_access_only_when_the_authorization_server_lists_it() -> None:
    listed = World(prm_scopes=["mcp:basic"], as_scopes=["mcp:basic", "offline_access"])
    run(call(listed, oauth(listed)))
    unlisted = World(prm_scopes=["mcp:basic"], as_scopes=["mcp:basic"])
    run(call(unlisted, oauth(unlisted)))
    assert scopes_asked(listed) == ["mcp:basic offline_access"]
    assert scopes_asked(unlisted) == ["mcp:basic"]


def test_step_up_asks_for_the_union_of_scopes() -> None:
    world = World(challenge_scope="mcp:basic")

    async def main() -> None:
        auth = oauth(world)
        async with world.client(auth) as http:
            assert (await http.post(world.server_url, json={})).status_code == 200
            world.required = {"mcp:write"}
            assert (await http.post(world.server_url, json={})).status_code == 200

    run(main())
    assert scopes_asked(world) == ["mcp:basic", "mcp:basic mcp:write"]


def test_step_up_gives_up_after_three_authorizations() -> None:
    world = World(required={"mcp:admin"})  # never granted: the scope asked is never it
    world.challenge_scope = "mcp:basic"

    async def main() -> list[int]:
        auth = oauth(world)
        async with world.client(auth) as http:
            first = await http.post(world.server_url, json={})
            second = await http.post(world.server_url, json={})  # still no new logins
            return [first.status_code, second.status_code]

    # The authorization server drops mcp:admin from every grant.
    original = world.token

    def token(request: httpx.Request) -> httpx.Response:
        response = original(request)
        for scopes in world.tokens.values():
            scopes.discard("mcp:admin")
        return response

    world.token = token  # type: ignore[method-assign]
    assert run(main()) == [403, 403]
    assert len(world.authorizations) == 3


# -- refresh and storage -----------------------------------------------------------------------
def expired_grant(world: World, refresh: str) -> Grant:
    world.refresh_tokens[refresh] = set()
    world.clients["kept-client"] = None
    return Grant(
        issuer=world.issuer,
        resource=world.server_url,
        client_id="kept-client",
        access_token="stale",
        refresh_token=refresh,
        expires_at=time.time() - 60,
    )


def test_a_short_lived_token_is_used_not_refreshed_before_every_request() -> None:
    """A 12-second token is good for 9 seconds (a quarter of its life kept as margin,
    not 30 s, which would refresh it before every request); a long-lived one keeps the
    30 s margin."""
    world = World(expires_in=12)
    auth = oauth(world)

    async def three_calls() -> None:
        async with world.client(auth) as http:
            for _ in range(3):
                assert (await http.post(world.server_url, json={})).status_code == 200

    run(three_calls())
    assert [t["grant_type"] for t in world.token_requests] == ["authorization_code"]
    assert len(set(world.accepted)) == 1
    now = time.time()
    grant = Grant(issuer="i", resource="r", client_id="c", access_token="t", issued_at=now)
    grant.expires_at = now + 12
    assert grant.usable()
    grant.issued_at, grant.expires_at = now - 10, now + 2  # in its last quarter
    assert not grant.usable()
    grant.issued_at, grant.expires_at = now - 3000, now + 20  # long-lived: 30 s margin
    assert not grant.usable()
    grant.issued_at = None  # stored by an older version: 30 s margin
    assert not grant.usable()


def test_a_stored_grant_is_refreshed_after_a_restart(tmp_path: Path) -> None:
    world = World()
    run(FileTokenStorage(tmp_path).save(expired_grant(world, "r-1")))
    restarted = oauth(world, storage=FileTokenStorage(tmp_path))  # a new process, in effect
    assert run(call(world, restarted)).status_code == 200
    assert [t["grant_type"] for t in world.token_requests] == ["refresh_token"]
    assert world.token_requests[0]["resource"] == world.server_url
    assert world.authorizations == []
    kept = run(FileTokenStorage(tmp_path).load(world.issuer, world.server_url))
    assert kept.access_token == world.accepted[0] and kept.expires_at > time.time() + 3000


def test_concurrent_requests_share_one_refresh() -> None:
    world = World()
    storage = InMemoryTokenStorage()
    run(storage.save(expired_grant(world, "r-2")))

    async def main() -> list[int]:
        auth = oauth(world, storage=storage)
        async with world.client(auth) as http:
            answers = await asyncio.gather(
                *(http.post(world.server_url, json={}) for _ in range(5))
            )
        return [a.status_code for a in answers]

    assert run(main()) == [200] * 5
    assert [t["grant_type"] for t in world.token_requests] == ["refresh_token"]


def test_a_refused_refresh_falls_back_to_authorization() -> None:
    world = World()
    storage = InMemoryTokenStorage()
    grant = expired_grant(world, "r-3")
    world.refresh_tokens.clear()  # revoked
    run(storage.save(grant))
    assert run(call(world, oauth(world, storage=storage))).status_code == 200
    assert [t["grant_type"] for t in world.token_requests] == [
        "refresh_token",
        "authorization_code",
    ]


def test_the_token_file_is_private_and_keyed_by_issuer_and_resource(tmp_path: Path) -> None:
    storage = FileTokenStorage(tmp_path / "tokens")
    one = Grant(issuer="https://a", resource="https://r/mcp", client_id="x", access_token="t1")
    other = Grant(issuer="https://b", resource="https://r/mcp", client_id="y", access_token="t2")
    run(storage.save(one))
    run(storage.save(other))
    files = sorted((tmp_path / "tokens").iterdir())
    assert len(files) == 2
    assert all(stat.S_IMODE(os.stat(f).st_mode) == 0o600 for f in files)
    assert stat.S_IMODE(os.stat(tmp_path / "tokens").st_mode) == 0o700
    assert run(storage.load("https://a", "https://r/mcp")).access_token == "t1"
    assert run(storage.load("https://b", "https://r/mcp")).access_token == "t2"
    run(storage.remove("https://a", "https://r/mcp"))
    assert run(storage.load("https://a", "https://r/mcp")) is None


def test_no_lock_is_held_while_a_stream_is_open() -> None:
    world = World()
    release = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        yield b"data: first\n\n"
        await release.wait()

    base = world.handle

    def handle(request: httpx.Request) -> httpx.Response:
        response = base(request)
        if request.method == "GET" and request.url == world.server_url and response.is_success:
            return httpx.Response(200, content=endless())
        return response

    async def main() -> int:
        auth = oauth(world)
        transport = httpx.MockTransport(handle)
        async with (
            httpx.AsyncClient(transport=transport, auth=auth) as http,
            http.stream("GET", world.server_url) as stream,
        ):
            assert stream.status_code == 200
            world.tokens.clear()  # the stream's grant is revoked: the POST must log in
            world.refresh_tokens.clear()
            answer = await asyncio.wait_for(http.post(world.server_url, json={}), 5)
            release.set()
            return answer.status_code

    assert run(main()) == 200
    assert len(world.authorizations) == 2


def test_a_new_authorization_server_means_a_new_registration() -> None:
    world = World(challenge_scope="mcp:basic")

    async def main() -> None:
        auth = oauth(world)
        async with world.client(auth) as http:
            assert (await http.post(world.server_url, json={})).status_code == 200
            world.issuer = "https://as2.example.com"  # the PRM now names another server
            world.tokens.clear()
            assert (await http.post(world.server_url, json={})).status_code == 200

    run(main())
    first, second = world.registrations, world.authorizations
    assert len(first) == 2
    old_client = world.authorizations[0]["client_id"]
    assert old_client.startswith("https://as.example.com#")
    assert second[1]["client_id"].startswith("https://as2.example.com#")
    assert all(t["client_id"] != old_client for t in world.token_requests[1:])


# -- machine clients ---------------------------------------------------------------------------
def test_client_credentials_with_a_shared_secret() -> None:
    world = World(auth_methods=["client_secret_basic"], grant_types=["client_credentials"])
    world.clients["robot"] = "pw"
    auth = ClientCredentials("robot", client_secret="pw", transport=world.transport())
    assert run(call(world, auth)).status_code == 200
    (token,) = world.token_requests
    assert token["grant_type"] == "client_credentials"
    assert token["_authorization"].startswith("Basic ")
    assert token["resource"] == world.server_url
    assert world.authorizations == []


def test_client_credentials_with_a_private_key_jwt() -> None:
    world = World(auth_methods=["private_key_jwt"], grant_types=["client_credentials"])
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = ECKey.import_key(private.public_key())
    auth = ClientCredentials("robot", private_key=pem, transport=world.transport())
    assert run(call(world, auth)).status_code == 200
    (token,) = world.token_requests
    assert (
        token["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    )
    claims = jwt.decode(token["client_assertion"], public, algorithms=["ES256"]).claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("robot", "robot", world.issuer)
    assert claims["exp"] > time.time()


def test_client_credentials_need_exactly_one_secret() -> None:
    with pytest.raises(AuthorizationError):
        ClientCredentials("robot")


def test_an_unreachable_authorization_server_keeps_the_refresh_token() -> None:
    world = World()
    storage = InMemoryTokenStorage()
    run(storage.save(expired_grant(world, "r-4")))

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("down", request=request)

    transport = httpx.MockTransport(down)
    auth = OAuth(
        redirect=HeadlessRedirect(transport=transport), transport=transport, storage=storage
    )
    with pytest.raises(AuthorizationError):
        run(call(world, auth))
    kept = run(storage.load(world.issuer, world.server_url))
    assert kept.refresh_token == "r-4"
    auth.transport = world.transport()  # back up: the refresh token still works
    assert run(call(world, auth)).status_code == 200
    assert [t["grant_type"] for t in world.token_requests] == ["refresh_token"]


# -- DPoP (RFC 9449) ---------------------------------------------------------------------------
def test_dpop_binds_the_token_and_proves_every_request() -> None:
    world = World(dpop=True)

    async def main() -> None:
        auth = oauth(world, dpop=True)
        async with world.client(auth) as http:
            for _ in range(2):
                assert (await http.post(world.server_url, json={})).status_code == 200

    run(main())
    assert len(world.dpop_bound) == 1 and world.accepted[0] in world.dpop_bound
    jtis = [claims["jti"] for claims in world.proofs]
    assert len(jtis) == 3 and len(set(jtis)) == 3  # the token request and two requests


def test_dpop_nonces_from_both_servers_are_honoured() -> None:
    world = World(dpop=True, dpop_nonce="n-1")
    assert run(call(world, oauth(world, dpop=True))).status_code == 200
    # Each server refused one proof without the nonce, then took one with it.
    assert [claims.get("nonce") for claims in world.proofs] == [None, "n-1", None, "n-1"]


def test_a_dpop_nonce_handed_out_with_a_success_is_used_next() -> None:
    """RFC 9449 8.2: a server may give the next nonce with a 200; the client uses it
    for its next proof instead of waiting to be refused."""
    world = World(dpop=True, dpop_nonce="n-1", next_nonce="n-2")

    async def main() -> None:
        auth = oauth(world, dpop=True)
        async with world.client(auth) as http:
            assert (await http.post(world.server_url, json={})).status_code == 200
            world.dpop_nonce = "n-2"  # the server rotated
            assert (await http.post(world.server_url, json={})).status_code == 200

    run(main())
    assert [claims.get("nonce") for claims in world.proofs] == [None, "n-1", None, "n-1", "n-2"]


def test_dpop_only_when_asked_for() -> None:
    world = World(dpop=True)
    assert run(call(world, oauth(world))).status_code == 200
    assert world.dpop_bound == {} and world.proofs == []


def test_a_stored_dpop_grant_keeps_its_key_across_a_restart(tmp_path: Path) -> None:
    world = World(dpop=True)
    first = oauth(world, dpop=True, storage=FileTokenStorage(tmp_path))
    assert run(call(world, first)).status_code == 200
    grant = run(FileTokenStorage(tmp_path).load(world.issuer, world.server_url))
    grant.expires_at = time.time() - 1
    run(FileTokenStorage(tmp_path).save(grant))
    restarted = oauth(world, dpop=True, storage=FileTokenStorage(tmp_path))
    assert run(call(world, restarted)).status_code == 200
    assert [t["grant_type"] for t in world.token_requests] == [
        "authorization_code",
        "refresh_token",
    ]
    assert len(set(world.dpop_bound.values())) == 1  # one key throughout


def test_a_refused_token_is_refreshed_before_asking_the_user_again() -> None:
    world = World()

    async def main() -> None:
        auth = oauth(world)
        async with world.client(auth) as http:
            assert (await http.post(world.server_url, json={})).status_code == 200
            world.tokens.clear()  # revoked by the server; the refresh token still holds
            assert (await http.post(world.server_url, json={})).status_code == 200

    run(main())
    assert len(world.authorizations) == 1
    assert [t["grant_type"] for t in world.token_requests] == [
        "authorization_code",
        "refresh_token",
    ]
