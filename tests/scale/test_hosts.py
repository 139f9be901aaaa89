"""docs/guide/deployment.md's several-host layout, simulated on loopback addresses
(`tests/scale/hosts_layout.py`): three hosts of two workers each behind nginx with TLS,
Redis with Sentinel, one shared MCPGEN_STATE_KEYS from a file. Every request goes
through `https://`; nginx's access log says which host served it."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen import Client, ToolTask
from tests.docs.blocks import fenced_blocks
from tests.scale.hosts_layout import ADDRESSES, ODD, PAGE, Layout, healthy, layout, tls_context
from tests.scale.wire import open_session, sse_fields

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis, pytest.mark.needs_nginx]

CLIENT_ADDRESS = "127.0.0.9"  # the client connects from here: the workers must see it
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
CAPS = {"elicitation": {}}


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Layout]:
    with layout(tmp_path_factory.mktemp("hosts")) as running:
        yield running


def client(running: Layout) -> httpx.Client:
    transport = httpx.HTTPTransport(local_address=CLIENT_ADDRESS, verify=tls_context(running.cert))
    return httpx.Client(transport=transport, timeout=30)


def async_client(running: Layout) -> httpx.AsyncClient:
    context = tls_context(running.cert)
    transport = httpx.AsyncHTTPTransport(local_address=CLIENT_ADDRESS, verify=context)
    return httpx.AsyncClient(transport=transport, timeout=30)


def modern(rid: int, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": CAPS,
    }
    body = {"name": name, "arguments": arguments, "_meta": meta, **params}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": body}


def modern_headers(name: str) -> dict[str, str]:
    return {
        **LEGACY,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
    }


def post(http: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
    """A modern tools/call, with the headers that name it."""
    return http.post(url, json=body, headers=modern_headers(body["params"]["name"]))


def served_by(running: Layout, before: int, session: str | None = None) -> set[str]:
    hits = running.hits()[before:]
    return {
        h.upstream for h in hits if h.status < 300 and (session is None or h.session == session)
    }


def test_the_hosts_answer_health_checks_and_share_one_key_id(hosts: Layout) -> None:
    for host in hosts.hosts:
        assert healthy(host.address, hosts.port), host.address
        assert f"http://{host.address}:{hosts.port}/mcp" in "".join(host.lines)
    (shown,) = [b.code for b in fenced_blocks(PAGE) if b.code.startswith("mcpgen: state key id")]
    said = [line for line in hosts.hosts[0].lines if line.startswith("mcpgen: state key id")]
    assert [re.sub(r"id \w+", "id X", line) for line in said] == [re.sub(r"id \w+", "id X", shown)]
    ids = {host.key_id() for host in hosts.hosts}
    assert len(ids) == 1, ids
    assert hosts.odd.key_id() not in ids  # the misconfigured host shows it at once


def test_a_modern_flow_is_served_by_every_host(hosts: Layout) -> None:
    """Tool calls that ask for input: each round may land on another host, and opens
    the state another host sealed. The workers see what the balancer forwarded."""
    before = len(hosts.hits())
    seen: list[dict[str, Any]] = []
    with client(hosts) as http:
        for n in range(6):
            asked = post(http, hosts.url, modern(n, "confirm", {"path": f"/f{n}"}))
            assert asked.status_code == 200, asked.text
            result = asked.json()["result"]
            assert result["resultType"] == "input_required"
            answer = {"confirm": {"action": "accept", "content": {"sure": True}}}
            params = {"inputResponses": answer, "requestState": result["requestState"]}
            done = post(http, hosts.url, modern(100 + n, "confirm", {"path": f"/f{n}"}, **params))
            assert done.status_code == 200, done.text
            assert done.json()["result"]["content"][0]["text"].startswith(f"accept: /f{n} on ")
        for n in range(6):
            where = http.post(
                hosts.url, json=modern(n, "where", {}), headers=modern_headers("where")
            )
            seen.append(json.loads(where.json()["result"]["content"][0]["text"]))
    assert served_by(hosts, before) == set(ADDRESSES)
    assert {s["host"] for s in seen} == set(ADDRESSES)
    assert {s["proto"] for s in seen} == {"https"}
    assert {s["host_header"] for s in seen} == {hosts.url.split("/")[2]}
    assert {s["client"] for s in seen} == {CLIENT_ADDRESS}  # X-Forwarded-For believed


def test_a_legacy_session_is_served_by_every_host(hosts: Layout) -> None:
    async def scenario() -> list[str]:
        async with (
            async_client(hosts) as http,
            Client.http(hosts.url, era="legacy", httpx_client=http) as mcp,
        ):
            assert mcp.protocol_version == "2025-11-25"
            answers = []
            for _ in range(9):
                result = await mcp.call_tool("where", {})
                answers.append(json.loads(result.content[0].text)["host"])  # type: ignore[union-attr]
            return answers

    before = len(hosts.hits())
    answers = asyncio.run(scenario())
    assert set(answers) == set(ADDRESSES)
    sessions = {h.session for h in hosts.hits()[before:] if h.session}
    assert len(sessions) == 1
    assert served_by(hosts, before, sessions.pop()) == set(ADDRESSES)


def test_an_sse_stream_resumes_on_another_host(hosts: Layout) -> None:
    """A 2025-11-25 tools/call streamed as SSE by one host; the client keeps the first
    event's id only and resumes with Last-Event-ID: another host replays the rest."""
    with client(hosts) as http:
        session = open_session(http, hosts.url, "resumer")
        sid = session["mcp-session-id"]
        level = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "logging/setLevel",
            "params": {"level": "info"},
        }
        assert http.post(hosts.url, json=level, headers=session).status_code == 200
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "chatty", "arguments": {}}}  # fmt: skip
        before = len(hosts.hits())
        whole = http.post(hosts.url, json=call, headers=session)
        streamed = [e for e in sse_fields(whole.text) if "id" in e]
        assert len([e for e in streamed if e.get("data")]) == 4, whole.text  # 3 logs, the result
        first = streamed[0]["id"]
        missed = [e["data"] for e in streamed[1:] if e.get("data")]
        resume = {**session, "accept": "text/event-stream", "last-event-id": first}
        replayed: list[str] = []
        with http.stream("GET", hosts.url, headers=resume) as response:
            assert response.status_code == 200
            text = ""
            for chunk in response.iter_text():
                text += chunk
                replayed = [e["data"] for e in sse_fields(text) if e.get("data")]
                if any('"id":2' in data for data in replayed):
                    break
    assert replayed == missed
    deadline = time.monotonic() + 20  # nginx logs the GET once it has seen it end
    while len(mine := [h for h in hosts.hits()[before:] if h.session == sid]) < 2:
        assert time.monotonic() < deadline, hosts.hits()[before:]
        time.sleep(0.1)
    post, get = mine[:2]
    assert (post.method, get.method) == ("POST", "GET")
    assert post.upstream != get.upstream, (post, get)


def test_a_task_started_on_one_host_is_polled_through_the_others(hosts: Layout) -> None:
    async def scenario() -> str:
        async with (
            async_client(hosts) as http,
            Client.http(hosts.url, era="modern", httpx_client=http) as mcp,
        ):
            handle = await mcp.call_tool("slow", {"seconds": 1.5}, task=True)
            assert isinstance(handle, ToolTask), handle
            result = await mcp.wait_task(handle, timeout=60, poll=0.2)
            return result.content[0].text  # type: ignore[union-attr]

    before = len(hosts.hits())
    assert asyncio.run(scenario()) == "slept 1.5 s"
    hits = [h for h in hosts.hits()[before:] if h.status == 200]
    assert len(hits) >= 4, hits
    created = hits[0].upstream
    assert {h.upstream for h in hits[1:]} - {created}, hits  # polled through other hosts
    assert {h.upstream for h in hits} == set(ADDRESSES)


def test_only_the_public_name_and_its_own_origin_reach_the_hosts(hosts: Layout) -> None:
    name = hosts.url.split("/")[2]
    body = modern(1, "where", {})
    with client(hosts) as http:
        ok = http.post(
            hosts.url, json=body, headers={**modern_headers("where"), "origin": f"https://{name}"}
        )
        assert ok.status_code == 200, ok.text
        foreign = {**modern_headers("where"), "origin": "https://evil.example"}
        refused = http.post(hosts.url, json=body, headers=foreign)
        assert refused.status_code == 403
        assert "Origin 'https://evil.example' is not allowed" in refused.text
        with pytest.raises(httpx.RemoteProtocolError):  # 444: closed without an answer
            http.post(
                hosts.url, json=body, headers={**modern_headers("where"), "host": "evil.example"}
            )


def test_a_host_with_other_state_keys_refuses_what_the_others_sealed(hosts: Layout) -> None:
    """The page's warning: the fourth host started and answers, but a requestState
    sealed by the deployment's hosts is refused there, and the reverse."""
    odd = f"http://{ODD}:{hosts.port}/mcp"
    local = {**modern_headers("confirm"), "host": f"localhost:{hosts.port}"}
    answer = {"confirm": {"action": "accept", "content": {"sure": True}}}
    with client(hosts) as http, httpx.Client(timeout=30) as direct:
        asked = http.post(
            hosts.url, json=modern(1, "confirm", {"path": "/x"}), headers=modern_headers("confirm")
        )
        state = asked.json()["result"]["requestState"]
        params = {"inputResponses": answer, "requestState": state}
        there = direct.post(odd, json=modern(2, "confirm", {"path": "/x"}, **params), headers=local)
        assert there.status_code == 200, there.text
        assert there.json()["error"] == {
            "code": -32602,
            "message": "requestState was not issued by this server",
        }
        plain = direct.post(
            odd, json=modern(3, "where", {}), headers={**local, "mcp-name": "where"}
        )
        assert json.loads(plain.json()["result"]["content"][0]["text"])["host"] == ODD
        own = direct.post(odd, json=modern(4, "confirm", {"path": "/y"}), headers=local)
        params = {"inputResponses": answer, "requestState": own.json()["result"]["requestState"]}
        back = post(http, hosts.url, modern(5, "confirm", {"path": "/y"}, **params))
        assert back.json()["error"]["message"] == "requestState was not issued by this server"
