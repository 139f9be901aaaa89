"""Principals are namespaced (issue 22): the user `alice` (`sub`), a client-credentials
token whose `client_id` is "alice", and the user `alice` of another issuer are three
principals. None of them can use another's legacy session, task or requestState."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen import Client, McpError
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from tests.auth.test_http_auth import ELICITING, INIT, LEGACY, bearer, build
from tests.transports.httpharness import body, modern_headers, rpc, serve

ISSUER = "https://issuer.example"
TOKENS = {
    "user": AccessToken(subject="alice", issuer=ISSUER, scopes=frozenset({"read"})),
    "client": AccessToken(client_id="alice", issuer=ISSUER, scopes=frozenset({"read"})),
    "elsewhere": AccessToken(
        subject="alice", issuer="https://other.example", scopes=frozenset({"read"})
    ),
}
IMPOSTORS = ["client", "elsewhere"]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    auth = AuthSettings(StaticTokenVerifier(TOKENS), authorization_servers=[ISSUER])
    with serve(build().asgi_app(auth=auth)) as (endpoint, _):
        yield endpoint


def test_the_keys_differ_by_kind_and_issuer() -> None:
    keys = {name: token.principal for name, token in TOKENS.items()}
    assert len(set(keys.values())) == 3
    assert keys["user"] == '["https://issuer.example","sub","alice"]'
    assert keys["client"] == '["https://issuer.example","client","alice"]'
    # A subject that looks like another key's parts stays a different key.
    tricky = AccessToken(subject='alice","x', issuer=ISSUER).principal
    assert tricky not in keys.values()


@pytest.mark.parametrize("impostor", IMPOSTORS)
def test_a_legacy_session_is_not_anothers(url: str, impostor: str) -> None:
    made = httpx.post(url, headers=LEGACY | bearer("user"), content=rpc(0, "initialize", INIT))
    session = LEGACY | {"mcp-session-id": made.headers["mcp-session-id"]}
    ping = rpc(1, "ping")
    assert httpx.post(url, headers=session | bearer("user"), content=ping).status_code == 200
    assert httpx.post(url, headers=session | bearer(impostor), content=ping).status_code == 404


@pytest.mark.parametrize("impostor", IMPOSTORS)
def test_a_task_is_not_anothers(url: str, impostor: str) -> None:
    async def scenario() -> None:
        async with Client.http(url, era="modern", headers=bearer("user")) as alice:
            handle = await alice.call_tool("slow", task=True)
            task_id = handle.id  # type: ignore[union-attr]
            async with Client.http(url, era="modern", headers=bearer(impostor)) as other:
                with pytest.raises(McpError) as caught:
                    await other.get_task(task_id)
                assert caught.value.code == -32602
            assert (await alice.get_task(task_id)).task_id == task_id

    asyncio.run(scenario())


@pytest.mark.parametrize("impostor", IMPOSTORS)
def test_request_state_is_not_anothers(url: str, impostor: str) -> None:
    def confirm(token: str, rid: int, **more: Any) -> dict[str, Any]:
        headers = modern_headers("tools/call", "confirm") | bearer(token)
        params = {"name": "confirm", **more}
        answer = httpx.post(
            url, headers=headers, content=body(rid, "tools/call", params, **ELICITING)
        )
        return answer.json()  # type: ignore[no-any-return]

    state = confirm("user", 1)["result"]["requestState"]
    retry = {"requestState": state, "inputResponses": {"ok": {"action": "accept"}}}
    assert "different principal" in confirm(impostor, 2, **retry)["error"]["message"]
    assert "confirmed by" in confirm("user", 3, **retry)["result"]["content"][0]["text"]
