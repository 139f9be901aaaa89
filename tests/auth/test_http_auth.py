"""A protected server over real HTTP (uvicorn on 127.0.0.1): the 401/400/403 shapes,
the protected resource metadata (mounted too), per-feature scopes in both eras,
`ctx.auth`, and sessions and tasks bound to the token's principal."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from mcpgen import Client, Context, InputRequired, McpError, Server, elicit_form
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from tests.transports.httpharness import body, modern_headers, rpc, running, serve

RESOURCE_PATH = "/mcp"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}
ELICITING = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def build(**settings: Any) -> Server:
    server = Server("protected")

    @server.tool
    def whoami(ctx: Context) -> str:
        """The caller's subject and scopes."""
        assert ctx.auth is not None
        return f"{ctx.auth.subject} {sorted(ctx.auth.scopes)} {ctx.principal}"

    @server.tool(scopes=["admin"])
    def admin_only() -> str:
        return "granted"

    @server.tool(task="optional")
    async def slow(ctx: Context) -> str:
        await asyncio.sleep(0.05)
        return f"done for {ctx.auth.subject if ctx.auth else None}"

    @server.tool
    def confirm(ctx: Context) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            form = elicit_form("Sure?", {"type": "object", "properties": {}})
            return InputRequired({"ok": form}, state={"asked": True})
        return f"confirmed by {ctx.principal}"

    @server.prompt(scopes=["admin"])
    def secret_prompt() -> str:
        return "psst"

    @server.resource("res://secret", scopes=["admin"])
    def secret() -> str:
        return "hidden"

    return server


TOKENS = {
    "alice-token": AccessToken(subject="alice", client_id="app", scopes=frozenset({"read"})),
    "root-token": AccessToken(subject="root", scopes=frozenset({"read", "admin"})),
    "bob-token": AccessToken(subject="bob", scopes=frozenset({"read"})),
    "machine-token": AccessToken(client_id="robot", scopes=frozenset({"read"})),
}


def settings(**overrides: Any) -> AuthSettings:
    options: dict[str, Any] = {
        "resource": None,
        "authorization_servers": ["https://issuer.example"],
        "scopes_supported": ["read", "admin"],
    }
    options.update(overrides)
    return AuthSettings(StaticTokenVerifier(TOKENS), **options)


@pytest.fixture
def url() -> Iterator[str]:
    with serve(build().asgi_app(auth=settings())) as (endpoint, _):
        yield endpoint


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def challenge(response: httpx.Response) -> dict[str, str]:
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    out = {}
    for part in value[7:].split(", "):
        key, _, quoted = part.partition("=")
        out[key] = json.loads(quoted)
    return out


def post_modern(
    url: str, token: str | None, method: str, name: str | None, params: dict[str, Any]
) -> httpx.Response:
    headers = modern_headers(method, name)
    if token is not None:
        headers |= bearer(token)
    return httpx.post(url, headers=headers, content=body(1, method, params), timeout=10)


# -- 401 and 400 -------------------------------------------------------------------------------
def test_no_token_is_401_with_the_metadata_url_and_no_error(url: str) -> None:
    response = post_modern(url, None, "tools/list", None, {})
    assert response.status_code == 401
    params = challenge(response)
    origin = url.removesuffix(RESOURCE_PATH)
    assert params == {
        "resource_metadata": f"{origin}/.well-known/oauth-protected-resource/mcp",
    }
    for method in ("GET", "DELETE"):
        assert httpx.request(method, url, timeout=10).status_code == 401
    assert httpx.get(origin + "/sse", timeout=10).status_code == 401
    assert httpx.post(origin + "/messages?session_id=x", timeout=10).status_code == 401


@pytest.mark.parametrize(
    ("header", "status", "error"),
    [
        ("Bearer nope", 401, "invalid_token"),
        ("Bearer " + "a" * 9000, 401, "invalid_token"),
        ("Bearer a b", 400, "invalid_request"),
        ("Bearer \u00e9t\u00e9", 400, "invalid_request"),
        ("Bearer", 401, None),
        ("Basic YWxpY2U6c2VjcmV0", 401, None),
        ("bearer", 401, None),
    ],
)
def test_bad_tokens_and_malformed_headers(
    url: str, header: str, status: int, error: str | None
) -> None:
    headers: dict[str, str | bytes] = {**modern_headers("tools/list")}
    headers["authorization"] = header.encode("utf-8")  # raw bytes, UTF-8 included
    response = httpx.post(url, headers=headers, content=body(1, "tools/list"), timeout=10)
    assert response.status_code == status
    params = challenge(response)
    assert params.get("error") == error
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    if error is not None:
        assert params["error_description"]


def test_several_authorization_headers_are_a_bad_request(url: str) -> None:
    headers = [
        *modern_headers("tools/list").items(),
        ("authorization", "Bearer alice-token"),
        ("authorization", "Bearer root-token"),
    ]
    response = httpx.post(url, headers=headers, content=body(1, "tools/list"), timeout=10)
    assert response.status_code == 400
    assert challenge(response)["error"] == "invalid_request"


def test_required_scopes_are_named_in_the_challenge() -> None:
    app = build().asgi_app(
        auth=settings(required_scopes=["read"], resource="https://api.example/mcp")
    )
    with serve(app) as (endpoint, _):
        response = post_modern(endpoint, None, "tools/list", None, {})
        assert challenge(response) == {
            "resource_metadata": "https://api.example/.well-known/oauth-protected-resource/mcp",
            "scope": "read",
        }
        machine = AccessToken(client_id="x")  # noqa: F841 (documents the case below)
        response = post_modern(endpoint, "alice-token", "tools/list", None, {})
        assert response.status_code == 200


# -- protected resource metadata ---------------------------------------------------------------
def test_metadata_at_the_path_and_at_the_root(url: str) -> None:
    origin = url.removesuffix(RESOURCE_PATH)
    expected = {
        "resource": url,
        "authorization_servers": ["https://issuer.example"],
        "scopes_supported": ["read", "admin"],
        "bearer_methods_supported": ["header"],
    }
    for where in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        response = httpx.get(origin + where, timeout=10)
        assert response.status_code == 200, where
        assert response.headers["content-type"] == "application/json"
        assert response.json() == expected
    for wrong in ("/other", "-x/mcp"):
        answer = httpx.get(origin + "/.well-known/oauth-protected-resource" + wrong, timeout=10)
        assert answer.status_code == 404
    assert (
        httpx.post(origin + "/.well-known/oauth-protected-resource/mcp", timeout=10).status_code
        == 405
    )


def test_bearer_only_mode_invents_no_issuer() -> None:
    app = build().asgi_app(
        auth=settings(authorization_servers=[], resource="https://api.example/mcp")
    )
    with serve(app) as (endpoint, _):
        origin = endpoint.removesuffix(RESOURCE_PATH)
        doc = httpx.get(origin + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
        assert doc == {
            "resource": "https://api.example/mcp",  # exactly as configured
            "scopes_supported": ["read", "admin"],
            "bearer_methods_supported": ["header"],
        }


def test_mounted_under_a_prefix() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    mcp = build().asgi_app(auth=settings())
    host = Starlette(routes=[Mount("/api", app=mcp), Mount("/.well-known", app=mcp)])
    config = uvicorn.Config(host, "127.0.0.1", 0, log_level="warning", loop="asyncio")
    with running(uvicorn.Server(config)) as origin:
        response = post_modern(origin + "/api/mcp", None, "tools/list", None, {})
        assert response.status_code == 401
        where = challenge(response)["resource_metadata"]
        assert where == f"{origin}/.well-known/oauth-protected-resource/api/mcp"
        doc = httpx.get(where, timeout=10).json()
        assert doc["resource"] == f"{origin}/api/mcp"
        ok = post_modern(origin + "/api/mcp", "alice-token", "tools/list", None, {})
        assert ok.status_code == 200


# -- scopes per feature ------------------------------------------------------------------------
def test_a_modern_call_without_the_scope_is_403_naming_the_union(url: str) -> None:
    response = post_modern(url, "alice-token", "tools/call", "admin_only", {"name": "admin_only"})
    assert response.status_code == 403
    params = challenge(response)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == "admin read"  # needed plus held: ask for the union
    granted = post_modern(url, "root-token", "tools/call", "admin_only", {"name": "admin_only"})
    assert granted.status_code == 200
    assert granted.json()["result"]["content"][0]["text"] == "granted"
    for method, name, params_ in [
        ("prompts/get", "secret_prompt", {"name": "secret_prompt"}),
        ("resources/read", "res://secret", {"uri": "res://secret"}),
    ]:
        assert post_modern(url, "alice-token", method, name, params_).status_code == 403
        assert post_modern(url, "root-token", method, name, params_).status_code == 200


def test_the_body_decides_not_a_lying_header(url: str) -> None:
    headers = modern_headers("tools/call", "whoami") | bearer("alice-token")
    response = httpx.post(
        url, headers=headers, content=body(1, "tools/call", {"name": "admin_only"}), timeout=10
    )
    # The core reads the body's name (and refuses a header that disagrees with it).
    assert response.status_code == 400 and "granted" not in response.text
    assert "Mcp-Name does not match" in response.json()["error"]["message"]


def test_a_legacy_call_without_the_scope_is_403_too(url: str) -> None:
    init = rpc(0, "initialize", INIT)
    made = httpx.post(url, headers=LEGACY | bearer("alice-token"), content=init, timeout=10)
    session = LEGACY | {"mcp-session-id": made.headers["mcp-session-id"]}
    call = rpc(1, "tools/call", {"name": "admin_only", "arguments": {}})
    refused = httpx.post(url, headers=session | bearer("alice-token"), content=call, timeout=10)
    assert refused.status_code == 403
    assert challenge(refused)["scope"] == "admin read"
    old = {**INIT, "protocolVersion": "2025-03-26"}  # a revision with batches
    made = httpx.post(
        url, headers=LEGACY | bearer("alice-token"), content=rpc(0, "initialize", old)
    )
    session = LEGACY | {"mcp-session-id": made.headers["mcp-session-id"]}
    batch = b"[" + rpc(2, "ping") + b"," + call + b"]"  # a batch is judged whole
    refused = httpx.post(url, headers=session | bearer("alice-token"), content=batch, timeout=10)
    assert refused.status_code == 403

    async def scenario() -> None:
        async with Client.http(url, era="legacy", headers=bearer("root-token")) as root:
            result = await root.call_tool("admin_only")
            assert result.content[0].text == "granted"  # type: ignore[union-attr]

    asyncio.run(scenario())


# -- identity ----------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_ctx_auth_in_both_eras(url: str, era: str) -> None:
    async def scenario() -> str:
        async with Client.http(url, era=era, headers=bearer("alice-token")) as client:  # type: ignore[arg-type]
            assert client.era == era
            result = await client.call_tool("whoami")
            return result.content[0].text  # type: ignore[union-attr,no-any-return]

    assert asyncio.run(scenario()) == """alice ['read'] [null,"sub","alice"]"""


def test_the_principal_of_a_token_without_subject_is_its_client(url: str) -> None:
    async def scenario() -> str:
        async with Client.http(url, era="modern", headers=bearer("machine-token")) as client:
            result = await client.call_tool("slow")
            return result.content[0].text  # type: ignore[union-attr,no-any-return]

    assert asyncio.run(scenario()) == "done for None"
    assert TOKENS["machine-token"].principal == '[null,"client","robot"]'


def test_another_principals_legacy_session_does_not_exist(url: str) -> None:
    init = rpc(
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    made = httpx.post(url, headers=LEGACY | bearer("alice-token"), content=init, timeout=10)
    assert made.status_code == 200
    session = {"mcp-session-id": made.headers["mcp-session-id"]}
    ping = rpc(1, "ping")
    mine = httpx.post(
        url, headers=LEGACY | session | bearer("alice-token"), content=ping, timeout=10
    )
    assert mine.status_code == 200
    theirs = httpx.post(
        url, headers=LEGACY | session | bearer("bob-token"), content=ping, timeout=10
    )
    assert theirs.status_code == 404
    gone = httpx.delete(url, headers=session | bearer("bob-token"), timeout=10)
    assert gone.status_code == 404


def test_another_principals_sse_session_does_not_exist(url: str) -> None:
    origin = url.removesuffix(RESOURCE_PATH)
    with (
        httpx.Client(timeout=10) as http,
        http.stream("GET", origin + "/sse", headers=bearer("alice-token")) as stream,
    ):
        assert stream.status_code == 200
        lines = stream.iter_lines()
        endpoint = next(line for line in lines if line.startswith("data:"))[5:].strip()
        ping = rpc(1, "ping")
        json_type = {"content-type": "application/json"}
        theirs = http.post(origin + endpoint, headers=json_type | bearer("bob-token"), content=ping)
        assert theirs.status_code == 404
        mine = http.post(origin + endpoint, headers=json_type | bearer("alice-token"), content=ping)
        assert mine.status_code == 202


def test_tasks_of_another_principal_are_not_visible(url: str) -> None:
    async def scenario() -> None:
        async with Client.http(url, era="modern", headers=bearer("alice-token")) as alice:
            handle = await alice.call_tool("slow", task=True)
            assert not isinstance(handle, type(None))
            task_id = handle.id  # type: ignore[union-attr]
            async with Client.http(url, era="modern", headers=bearer("bob-token")) as bob:
                with pytest.raises(McpError) as caught:
                    await bob.get_task(task_id)
                assert caught.value.code == -32602
            status = await alice.get_task(task_id)
            assert status.task_id == task_id

    asyncio.run(scenario())


# -- lists ---------------------------------------------------------------------------------------
def names(client_token: str, url: str, era: str) -> dict[str, list[str]]:
    async def scenario() -> dict[str, list[str]]:
        async with Client.http(url, era=era, headers=bearer(client_token)) as client:  # type: ignore[arg-type]
            return {
                "tools": sorted(x.name for x in await client.list_tools()),
                "prompts": sorted(x.name for x in await client.list_prompts()),
                "resources": sorted(x.uri for x in await client.list_resources()),
            }

    return asyncio.run(scenario())


def test_lists_show_everything_by_default(url: str) -> None:
    assert "admin_only" in names("alice-token", url, "modern")["tools"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_lists_can_hide_what_the_caller_may_not_use(era: str) -> None:
    with serve(build().asgi_app(auth=settings(hide_unauthorized=True))) as (url, _):
        alice = names("alice-token", url, era)
        assert alice == {"tools": ["confirm", "slow", "whoami"], "prompts": [], "resources": []}
        root = names("root-token", url, era)
        assert root == {
            "tools": ["admin_only", "confirm", "slow", "whoami"],
            "prompts": ["secret_prompt"],
            "resources": ["res://secret"],
        }
        assert names("bob-token", url, era) == alice  # a cached page of the same variant


def test_request_state_is_bound_to_the_tokens_principal(url: str) -> None:
    def confirm(token: str, rid: int, **more: Any) -> dict[str, Any]:
        headers = modern_headers("tools/call", "confirm") | bearer(token)
        answer = httpx.post(
            url,
            headers=headers,
            content=body(rid, "tools/call", {"name": "confirm", **more}, **ELICITING),
            timeout=10,
        )
        return answer.json()  # type: ignore[no-any-return]

    state = confirm("alice-token", 1)["result"]["requestState"]
    retry = {"requestState": state, "inputResponses": {"ok": {"action": "accept"}}}
    bob = confirm("bob-token", 2, **retry)
    assert "different principal" in bob["error"]["message"]
    alice = confirm("alice-token", 3, **retry)
    assert alice["result"]["content"][0]["text"] == 'confirmed by [null,"sub","alice"]'


@pytest.mark.slow
def test_the_official_python_sdk_reads_our_challenges_and_metadata(url: str) -> None:
    """The official SDK's own parsers (run in its venv) understand the 401, the 403
    step-up challenge and the metadata document."""
    import subprocess
    from pathlib import Path

    from tests.tooling import official_python

    reader = Path(__file__).with_name("official_sdk_reader.py")
    done = subprocess.run(
        [official_python(), str(reader), url, "alice-token"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    origin = url.removesuffix(RESOURCE_PATH)
    assert seen == {
        "missing_status": 401,
        "resource_metadata": f"{origin}/.well-known/oauth-protected-resource/mcp",
        "resource": url,
        "authorization_servers": ["https://issuer.example"],
        "refused_status": 403,
        "refused_error": "insufficient_scope",
        "refused_scope": "admin read",
    }
