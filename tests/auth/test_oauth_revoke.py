"""`OAuth.revoke()` and `OAuth.logout()` against an in-process authorization server
(`RevokingWorld`): both tokens revoked with hints and the client's own
authentication, failures reported without secrets, local deletion in every case."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from mcpgen.auth import AuthorizationError, HeadlessRedirect, InMemoryTokenStorage, OAuth
from tests.auth.revoking_world import RevokingWorld


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def logged_in(world: RevokingWorld, **options: Any) -> OAuth:
    transport = world.transport()
    auth = OAuth(
        redirect=HeadlessRedirect(transport=transport),
        transport=transport,
        storage=InMemoryTokenStorage(),
        **options,
    )
    run(auth.login(world.server_url))
    return auth


def test_revoke_sends_both_tokens_with_hints_and_keeps_the_registration() -> None:
    world = RevokingWorld()
    auth = logged_in(world)
    grant = auth.grant
    assert grant is not None and grant.access_token and grant.refresh_token

    revocation = run(auth.revoke())
    assert revocation.complete and revocation.revoked == ("refresh_token", "access_token")
    assert [(r["token"], r["token_type_hint"]) for r in world.revocations] == [
        (grant.refresh_token, "refresh_token"),
        (grant.access_token, "access_token"),
    ]
    # A public client names itself (client_id in the form), as at the token endpoint.
    assert {r["client_id"] for r in world.revocations} == {grant.client_id}
    assert world.tokens == {} and world.refresh_tokens == {}
    kept = run(auth.storage.load(grant.issuer, grant.resource))
    assert kept is not None and kept.client_id == grant.client_id
    assert kept.access_token is None and kept.refresh_token is None


def test_a_confidential_client_authenticates_as_at_the_token_endpoint() -> None:
    world = RevokingWorld(auth_methods=["client_secret_basic"])
    auth = logged_in(world)
    assert run(auth.revoke()).complete
    # The world checks the secret; the header is the very one the token request had.
    at_token_endpoint = world.token_requests[-1]["_authorization"]
    assert at_token_endpoint.startswith("Basic ")
    for sent in world.revocations:
        assert sent["_authorization"] == at_token_endpoint and "client_id" not in sent
        assert sent["_client"] == auth.grant.client_id  # type: ignore[union-attr]


def test_an_expired_access_token_is_not_sent() -> None:
    world = RevokingWorld()
    auth = logged_in(world)
    assert auth.grant is not None
    auth.grant.expires_at = time.time() - 1
    revocation = run(auth.revoke())
    assert revocation.revoked == ("refresh_token",)
    assert [r["token_type_hint"] for r in world.revocations] == ["refresh_token"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("error", "HTTP 400 invalid_request: try again later"), ("down", "HTTP 503")],
)
def test_failures_are_reported_without_the_tokens(mode: str, reason: str) -> None:
    world = RevokingWorld(revocation=mode)
    auth = logged_in(world)
    grant = auth.grant
    assert grant is not None and grant.access_token and grant.refresh_token
    revocation = run(auth.revoke())
    assert not revocation.complete and revocation.revoked == ()
    assert set(revocation.failed) == {"refresh_token", "access_token"}
    for why in revocation.failed.values():
        assert why == f"revocation at {world.revocation_endpoint}: {reason}"
        assert grant.access_token not in why and grant.refresh_token not in why
    # Nothing revoked: the tokens stay where they were.
    assert auth.grant is grant and grant.refresh_token in world.refresh_tokens


def test_an_unreachable_authorization_server_is_a_failure_too() -> None:
    world = RevokingWorld()
    auth = logged_in(world)
    auth.metadata = None  # fetched again, from a server that is gone

    def gone(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    auth.transport = httpx.MockTransport(gone)
    revocation = run(auth.revoke())
    assert revocation.offered and revocation.revoked == ()
    assert set(revocation.failed) == {"refresh_token", "access_token"}


def test_without_a_revocation_endpoint_nothing_is_sent() -> None:
    world = RevokingWorld(revocation="absent")
    auth = logged_in(world)
    revocation = run(auth.revoke())
    assert not revocation.offered and not revocation.complete and revocation.failed == {}
    assert world.revocations == []


def test_logout_deletes_locally_even_when_revocation_fails() -> None:
    world = RevokingWorld(revocation="down")
    auth = logged_in(world)
    (ended,) = run(auth.logout(world.server_url))
    assert ended.resource == world.server_url and set(ended.failed) == {
        "refresh_token",
        "access_token",
    }
    assert run(auth.storage.grants()) == [] and auth.grant is None
    assert run(auth.logout(world.server_url)) == []


def test_revoke_without_a_grant_says_so() -> None:
    with pytest.raises(AuthorizationError, match="nothing to revoke"):
        run(OAuth().revoke())
