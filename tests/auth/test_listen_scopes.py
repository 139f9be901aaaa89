"""What a protected server delivers to a subscriber over HTTP: resource updates only for
resources the caller's token may read (a subscription to any other is a 403
`insufficient_scope`, in both eras and on HTTP+SSE), task notifications only for the
caller's own tasks, list changes to everyone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen import Client, Context, Server
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from mcpgen_types import ext_tasks as x
from tests.transports.httpharness import body, iter_sse, modern_headers, rpc, serve

TOKENS = {
    "alice-token": AccessToken(subject="alice", scopes=frozenset({"read"})),
    "root-token": AccessToken(subject="root", scopes=frozenset({"read", "admin"})),
    "bob-token": AccessToken(subject="bob", scopes=frozenset({"read"})),
}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
TASKS_CAPS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {x.EXTENSION_ID: {}}}}


def build() -> Server:
    server = Server("protected")

    @server.resource("res://public")
    def public() -> str:
        return "open"

    @server.resource("res://secret", scopes=["admin"])
    def secret() -> str:
        return "hidden"

    @server.resource_template("res://vault/{id}", scopes=["admin"])
    def vault(id: str) -> str:
        return id

    @server.tool
    def touch(uris: list[str]) -> str:
        for uri in uris:
            server.notify_resource_updated(uri)
        return "touched"

    @server.tool(task="optional")
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(0.3)
        return "done"

    return server


@pytest.fixture
def url() -> Iterator[str]:
    auth = AuthSettings(
        StaticTokenVerifier(TOKENS),
        authorization_servers=["https://issuer.example"],
        scopes_supported=["read", "admin"],
    )
    with serve(build().asgi_app(auth=auth)) as (endpoint, _):
        yield endpoint


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def listen_body(filters: dict[str, Any], **meta: Any) -> bytes:
    return body("L", "subscriptions/listen", {"notifications": filters}, **meta)


def scope_of(response: httpx.Response) -> str:
    assert response.status_code == 403
    header = response.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in header
    return str(json.loads(header.split("scope=", 1)[1].split(", ", 1)[0]))


# -- (1) resource updates ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "uris",
    [["res://secret"], ["res://vault/7"], ["res://public", "res://secret"]],
)
def test_a_listen_on_a_resource_the_token_may_not_read_is_403(url: str, uris: list[str]) -> None:
    headers = modern_headers("subscriptions/listen") | bearer("alice-token")
    refused = httpx.post(
        url, headers=headers, content=listen_body({"resourceSubscriptions": uris}), timeout=10
    )
    assert scope_of(refused) == "admin read"


def test_legacy_resources_subscribe_needs_the_scope_too(url: str) -> None:
    def session(token: str) -> dict[str, str]:
        made = httpx.post(url, headers=LEGACY | bearer(token), content=rpc(0, "initialize", INIT))
        return LEGACY | bearer(token) | {"mcp-session-id": made.headers["mcp-session-id"]}

    alice, root = session("alice-token"), session("root-token")
    for uri in ("res://secret", "res://vault/7"):
        subscribe = rpc(1, "resources/subscribe", {"uri": uri})
        assert scope_of(httpx.post(url, headers=alice, content=subscribe)) == "admin read"
        granted = httpx.post(url, headers=root, content=subscribe)
        assert granted.status_code == 200 and "result" in granted.json()
    public = rpc(2, "resources/subscribe", {"uri": "res://public"})
    assert "result" in httpx.post(url, headers=alice, content=public).json()


def test_a_subscribe_posted_to_the_sse_transport_needs_the_scope(url: str) -> None:
    origin = url.removesuffix("/mcp")
    with (
        httpx.Client(timeout=10) as http,
        http.stream("GET", origin + "/sse", headers=bearer("alice-token")) as stream,
    ):
        assert stream.status_code == 200
        lines = stream.iter_lines()  # kept: closing the iterator would end the session
        endpoint = next(ln for ln in lines if ln.startswith("data:"))[5:].strip()
        alice = {"content-type": "application/json"} | bearer("alice-token")
        init = http.post(origin + endpoint, headers=alice, content=rpc(0, "initialize", INIT))
        assert init.status_code == 202
        secret = rpc(1, "resources/subscribe", {"uri": "res://vault/7"})
        assert scope_of(http.post(origin + endpoint, headers=alice, content=secret)) == "admin read"


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_updates_reach_only_who_may_read_them(url: str, era: str) -> None:
    """root (admin) hears about the secret resources; alice only about the public one."""

    async def first_update(token: str, uris: list[str]) -> str:
        async with (
            Client.http(url, era=era, headers=bearer(token)) as client,  # type: ignore[arg-type]
            Client.http(url, era="modern", headers=bearer("root-token")) as toucher,
        ):
            notes = client.listen(resource_uris=uris)
            waiting = asyncio.ensure_future(anext(notes))
            await asyncio.sleep(0.3)  # the subscription is in place
            secrets = ["res://secret", "res://vault/7"]
            await toucher.call_tool("touch", {"uris": [*secrets, "res://public"]})
            note = await asyncio.wait_for(waiting, 10)
            await notes.aclose()
            return str(note.params.uri)  # type: ignore[union-attr]

    assert asyncio.run(first_update("root-token", ["res://vault/7"])) == "res://vault/7"
    assert asyncio.run(first_update("alice-token", ["res://public"])) == "res://public"


# -- (2) task notifications, (3) list changes ----------------------------------------------------
def test_another_principals_task_is_not_honoured_on_listen(url: str) -> None:
    async def start_task() -> str:
        async with Client.http(url, era="modern", headers=bearer("alice-token")) as alice:
            handle = await alice.call_tool("slow", task=True)
            return str(handle.id)  # type: ignore[union-attr]

    task_id = asyncio.run(start_task())

    def ack(token: str) -> dict[str, Any]:
        filters = {"taskIds": [task_id], "toolsListChanged": True}
        headers = modern_headers("subscriptions/listen") | bearer(token)
        with (
            httpx.Client(timeout=10) as http,
            http.stream(
                "POST", url, headers=headers, content=listen_body(filters, **TASKS_CAPS)
            ) as response,
        ):
            assert response.status_code == 200
            _, first = next(e for e in iter_sse(response) if e[0] == "event")
        assert first["method"] == "notifications/subscriptions/acknowledged"
        return dict(first["params"]["notifications"])

    assert ack("bob-token") == {"taskIds": [], "toolsListChanged": True}
    assert ack("alice-token") == {"taskIds": [task_id], "toolsListChanged": True}
