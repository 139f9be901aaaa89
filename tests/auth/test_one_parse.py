"""The scope check fails closed, on every transport (issue 22, critical).

Before, the HTTP gate decoded `params` on its own and let a request through when its
decoder failed (numbers out of range, deep nesting: a RecursionError and HTTP 500),
while the core, which keeps `params` raw and skips unknown members, ran the tool. Now
the core judges the params it decoded for the handler: a `read` token calling an
`admin` tool never runs it, whatever the body holds, and no body is answered 500."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.auth.scoped_world import RAN, World, call_body, modern_call, world

ODD = {
    "huge-float": b'"zz":1e400',
    "huge-negative-float": b'"zz":-1e400',
    "5000-digit-int": b'"zz":' + b"7" * 5000,
    "task-ttl": b'"task":{"ttl":1e400}',
    "deep-array": b'"zz":' + b"[" * 5000 + b"]" * 5000,
    "deep-object": b'"zz":' + b'{"a":' * 3000 + b"1" + b"}" * 3000,
    "argument": b'"arguments":{"x":1e400}',
}


@pytest.fixture(scope="module")
def attacked() -> Iterator[World]:
    with world() as w:
        yield w


def judged(response: httpx.Response) -> None:
    """Refused or answered with a JSON-RPC error; never a handler's result, never 5xx."""
    assert RAN == [], f"a scoped handler ran: {RAN}"
    assert response.status_code < 500, response.text
    assert "granted" not in response.text and "secret" not in response.text
    if response.status_code == 200:
        replies = response.json()
        for reply in replies if isinstance(replies, list) else [replies]:
            assert "error" in reply or reply.get("id") == "p", reply  # the batch's ping


@pytest.mark.parametrize("odd", list(ODD), ids=list(ODD))
def test_a_2026_request(attacked: World, odd: str) -> None:
    judged(attacked.modern(modern_call(raw_extra=ODD[odd])))


@pytest.mark.parametrize("odd", list(ODD), ids=list(ODD))
def test_a_2025_11_25_session(attacked: World, odd: str) -> None:
    send = attacked.legacy_sender()
    body = call_body("tools/call", {"name": "admin_only"}, False, ODD[odd])
    response = send(body)
    judged(response)


@pytest.mark.parametrize("odd", list(ODD), ids=list(ODD))
def test_a_2025_03_26_batch(attacked: World, odd: str) -> None:
    send = attacked.batch_sender()
    response = send(call_body("tools/call", {"name": "admin_only"}, False, ODD[odd]))
    judged(response)


def test_http_sse_messages(attacked: World) -> None:
    with attacked.sse_sender() as send:
        for odd, extra in ODD.items():
            response = send(call_body("tools/call", {"name": "admin_only"}, False, extra))
            assert response.status_code in (202, 400, 403), (odd, response.text)
            assert RAN == [], (odd, RAN)
    assert not any("granted" in event for event in attacked.sse_events)


def test_plain_refusals_are_the_oauth_challenge_on_every_transport(attacked: World) -> None:
    """A well-formed call without the scope: 403 `insufficient_scope` naming the union,
    in a 2026-07-28 request, a session, a batch (judged whole: nothing in it runs) and
    on `/messages`."""
    plain = call_body("tools/call", {"name": "admin_only"}, False)
    responses = [
        attacked.modern(modern_call()),
        attacked.legacy_sender()(plain),
        attacked.batch_sender()(plain),
    ]
    with attacked.sse_sender() as send:
        responses.append(send(plain))
    for response in responses:
        assert response.status_code == 403
        challenge = response.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="admin read"' in challenge
        assert json.loads(response.text)["error"] == "insufficient_scope"
    assert RAN == []


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/get", {"name": "admin_prompt"}),
        ("resources/read", {"uri": "res://secret"}),
        ("resources/read", {"uri": "res://vault/7"}),
        ("completion/complete", {
            "ref": {"type": "ref/resource", "uri": "res://vault/{id}"},
            "argument": {"name": "id", "value": "1"},
        }),
        ("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "admin_prompt"},
            "argument": {"name": "x", "value": "1"},
        }),
        ("tools/call", {"name": "admin_task", "task": {"ttl": 60000}}),
    ],
)  # fmt: skip
def test_every_scoped_feature_kind_is_judged_with_odd_bodies(
    attacked: World, method: str, params: dict[str, object]
) -> None:
    name = str(params.get("name", params.get("uri", "")))
    for extra in (b"", ODD["huge-float"], ODD["deep-array"]):
        response = attacked.modern(call_body(method, params, True, extra), method, name)
        judged(response)
        if not extra:
            assert response.status_code == 403, (method, response.text)


def test_the_admin_token_still_gets_its_tools(attacked: World) -> None:
    headers = attacked.modern(modern_call()).request.headers
    granted = attacked.http.post(
        attacked.url,
        headers={**headers, "authorization": "Bearer admin"},
        content=modern_call(),
    )
    assert granted.json()["result"]["content"][0]["text"] == "admin access granted"
    RAN.clear()


def test_deep_nesting_is_never_a_500_without_auth_either() -> None:
    """The same bodies against an app without `auth=`: every endpoint answers 4xx or a
    JSON-RPC error (the core's one decode is the only parser on the path)."""
    from tests.auth.scoped_world import build
    from tests.transports.httpharness import modern_headers, serve

    deep = {name: ODD[name] for name in ("deep-array", "deep-object", "huge-float")}
    whole = {"array": b"[" * 100_000 + b"]" * 100_000, "object": b'{"a":' * 50_000 + b"1"}
    with serve(build().asgi_app()) as (url, _), httpx.Client(timeout=30) as http:
        headers = modern_headers("tools/call", "echo")
        for extra in deep.values():
            for modern in (True, False):
                sent = call_body("tools/call", {"name": "echo"}, modern, extra)
                assert http.post(url, headers=headers, content=sent).status_code < 500
        for raw in whole.values():
            assert http.post(url, headers=headers, content=raw).status_code == 400
            session = url.removesuffix("/mcp") + "/messages?session_id=x"
            assert http.post(session, headers=headers, content=raw).status_code == 404


def test_a_scoped_tool_added_while_serving_is_judged_at_once() -> None:
    """A server with no scoped feature judges nothing (a flag per registry snapshot);
    the snapshot a new registration swaps in is looked at again."""
    from mcpgen import Server
    from mcpgen.auth import AuthSettings, StaticTokenVerifier
    from tests.auth.scoped_world import TOKENS, bearer
    from tests.transports.httpharness import modern_headers, serve

    server = Server("growing")

    @server.tool
    def echo(text: str = "") -> str:
        return text

    ran: list[str] = []

    def late() -> str:
        ran.append("late")
        return "late admin"

    auth = AuthSettings(StaticTokenVerifier(TOKENS), authorization_servers=["https://i.example"])
    with serve(server.asgi_app(auth=auth)) as (url, _), httpx.Client(timeout=30) as http:
        call = call_body("tools/call", {"name": "echo"}, True)
        headers = modern_headers("tools/call", "echo") | bearer("reader")
        assert http.post(url, headers=headers, content=call).status_code == 200
        server.add_tool(late, scopes=["admin"])
        call = call_body("tools/call", {"name": "late"}, True)
        headers = modern_headers("tools/call", "late") | bearer("reader")
        assert http.post(url, headers=headers, content=call).status_code == 403
        assert ran == []
