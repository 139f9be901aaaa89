"""Two workers sharing one Redis, every request alternating between them: legacy
sessions, server-to-client requests in both styles, listen streams, tasks, SSE replay
and the principal binding all cross workers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncGenerator, Coroutine
from typing import Any, TypeVar, cast

import httpx
import pytest

from mcpgen import Client, ToolTask
from mcpgen_types import latest as t
from tests.scale.harness import balanced, principal_from_header, workers
from tests.scale.wire import frame, open_session

pytestmark = pytest.mark.needs_redis

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 60))


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent)
    return block.text


def accept(params: t.ElicitRequestParams) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={"sure": True})


def test_a_legacy_session_opened_on_one_worker_continues_on_the_other() -> None:
    with workers() as (urls, _):

        async def main() -> list[int]:
            http, balancer = balanced(urls)
            async with Client.http(urls[0], httpx_client=http, era="legacy") as client:
                for i in range(6):
                    assert text(await client.call_tool("add", {"a": i, "b": 1})) == str(i + 1)
                tools = await client.list_tools()
                assert "add" in [tool.name for tool in tools]
            return balancer.served

        served = run(main())
        assert min(served) >= 4  # both workers served the session's requests


def test_elicitation_answered_through_the_other_worker_in_both_styles() -> None:
    """The handler waits on the worker that got tools/call; the client's answer is
    POSTed to the other one and routed back over the bus."""
    with workers() as (urls, _):

        async def main() -> tuple[str, str]:
            http, _ = balanced(urls)
            async with Client.http(
                urls[0], httpx_client=http, era="legacy", on_elicitation=accept
            ) as client:
                returned = text(await client.call_tool("confirm", {"path": "/tmp/a"}))
                awaited = text(await client.call_tool("ask", {"path": "/tmp/b"}))
                return returned, awaited

        returned, awaited = run(main())
        assert returned == "accept: /tmp/a"
        assert awaited == "accept {'sure': True}"


def test_a_listen_stream_on_one_worker_hears_a_change_made_on_the_other() -> None:
    with workers() as (urls, _):

        async def main() -> None:
            async with (
                Client.http(urls[0], era="modern") as listener,
                Client.http(urls[1], era="modern") as changer,
            ):
                notes = listener.listen(tools=True)
                first = asyncio.ensure_future(anext(notes))
                for _ in range(40):  # until the listen stream (on worker 0) is open
                    assert text(await changer.call_tool("bump", {})) == "bumped"
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(first), 0.25)
                    if first.done():
                        break
                note = first.result()
                assert "ToolListChanged" in type(note).__name__
                await cast("AsyncGenerator[Any, None]", notes).aclose()

        run(main())


def test_a_task_started_on_one_worker_is_polled_and_cancelled_through_the_other() -> None:
    with workers() as (urls, _):

        async def main() -> None:
            http, balancer = balanced(urls)
            async with Client.http(urls[0], httpx_client=http, era="modern") as client:
                handle = await client.call_tool("slow", {"seconds": 0.3}, task=True)
                assert isinstance(handle, ToolTask)
                assert text(await handle.result(timeout=10, poll=0.05)) == "slept 0.3"
                long = await client.call_tool("slow", {"seconds": 30}, task=True)
                assert isinstance(long, ToolTask)
                for _ in range(2):  # one poll lands on each worker
                    assert (await long.get()).status == "working"
                await long.cancel()
                for _ in range(2):
                    assert (await long.get()).status == "cancelled"
            assert min(balancer.served) >= 3

        run(main())


@pytest.mark.slow
def test_a_task_waiting_for_input_is_answered_through_either_worker() -> None:
    """The task runs where it started; its answers (tasks/update) may reach the other
    worker, which forwards them over the bus."""
    with workers() as (urls, _):

        async def main() -> str:
            http, _ = balanced(urls, pin={"tools/call": 0, "tasks/update": 1})
            async with Client.http(
                urls[0], httpx_client=http, era="modern", on_elicitation=accept
            ) as client:
                handle = await client.call_tool("vet", {"name": "rex"}, task=True)
                assert isinstance(handle, ToolTask)
                return text(await handle.result(timeout=20, poll=0.05))

        assert run(main()) == "rex: accept accept"


def sse(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    out = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.split("\n")
        data = "".join(ln[5:].lstrip() for ln in lines if ln.startswith("data:"))
        ids = [ln[3:].lstrip() for ln in lines if ln.startswith("id:")]
        if data:
            out.append((ids[0] if ids else None, json.loads(data)))
    return out


def test_last_event_id_replays_on_the_other_worker_a_stream_started_on_one() -> None:
    with workers() as (urls, _), httpx.Client(timeout=10) as http:
        session = open_session(http, urls[0], "alice")
        call = frame(5, "tools/call", {"name": "chatty", "arguments": {}})
        response = http.post(urls[0], content=call, headers=session)
        events = sse(response.text)
        assert [e[1].get("method") for e in events] == [
            "notifications/message",
            "notifications/message",
            None,
        ]
        first_id = events[0][0]
        assert first_id is not None
        headers = {**session, "accept": "text/event-stream", "last-event-id": first_id}
        with http.stream("GET", urls[1], headers=headers) as stream:
            replayed: list[dict[str, Any]] = []
            buffer = ""
            for chunk in stream.iter_text():
                buffer += chunk
                replayed = [e[1] for e in sse(buffer)]
                if len(replayed) >= 2:
                    break
        assert replayed[0]["params"]["data"] == "two"
        assert replayed[1]["id"] == 5 and replayed[1]["result"]["content"][0]["text"] == "done"


def test_a_session_is_its_creators_on_every_worker() -> None:
    with workers(wrap=principal_from_header) as (urls, _), httpx.Client(timeout=10) as http:
        session = open_session(http, urls[0], "alice")
        call = frame(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        stolen = http.post(urls[1], content=call, headers={**session, "x-user": "mallory"})
        assert stolen.status_code == 404
        anonymous = {k: v for k, v in session.items() if k != "x-user"}
        assert http.post(urls[1], content=call, headers=anonymous).status_code == 404
        mine = http.post(urls[1], content=call, headers=session)
        assert mine.status_code == 200
        assert mine.json()["result"]["content"][0]["text"] == "3"


def test_a_legacy_get_stream_on_one_worker_hears_a_change_made_on_the_other() -> None:
    with workers() as (urls, _), httpx.Client(timeout=10) as http:
        session = open_session(http, urls[0], "alice")
        headers = {**session, "accept": "text/event-stream"}
        with http.stream("GET", urls[0], headers=headers) as stream:
            bump = frame(3, "tools/call", {"name": "bump", "arguments": {}})
            with httpx.Client(timeout=10) as other:
                done = other.post(urls[1], content=bump, headers=session)
            assert done.status_code == 200
            buffer, methods = "", []
            for chunk in stream.iter_text():
                buffer += chunk
                methods = [e[1].get("method") for e in sse(buffer)]
                if "notifications/tools/list_changed" in methods:
                    break
        assert "notifications/tools/list_changed" in methods


TASKS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}},
    },
}


def _modern(http: httpx.Client, url: str, user: str, method: str, params: dict[str, Any]) -> Any:
    """A raw 2026-07-28 request as `user` (`x-user`): its decoded JSON answer."""
    headers = {**MODERN_RAW, "mcp-method": method, "x-user": user}
    headers["mcp-name"] = params.get("taskId") or params["name"]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": TASKS_META}}
    return http.post(url, content=json.dumps(body), headers=headers).json()


MODERN_RAW = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
}


@pytest.mark.slow
def test_a_task_is_its_creators_on_every_worker_forwarded_updates_included() -> None:
    """Another principal, knowing the task id, gets the unknown-task error for every
    tasks/* method on both workers (on the one that does not run it, tasks/update would
    be forwarded over the bus): the task waits for its creator's answer, untouched."""
    with workers(wrap=principal_from_header) as (urls, _), httpx.Client(timeout=30) as http:
        created = _modern(
            http, urls[0], "alice", "tools/call", {"name": "vet", "arguments": {"name": "rex"}}
        )
        task_id = created["result"]["taskId"]
        asked: dict[str, Any] = {}
        for _ in range(100):
            asked = _modern(http, urls[1], "alice", "tasks/get", {"taskId": task_id})["result"]
            if asked["status"] == "input_required":
                break
            time.sleep(0.05)
        (key,) = asked["inputRequests"]
        answer = {key: {"action": "accept", "content": {"sure": True}}}
        for user in ("mallory", "Alice", ""):
            for url in urls:
                for method, extra in (
                    ("tasks/update", {"inputResponses": answer}),
                    ("tasks/cancel", {}),
                    ("tasks/get", {}),
                ):
                    refused = _modern(http, url, user, method, {"taskId": task_id, **extra})
                    assert refused["error"]["code"] == -32602, (user, url, method, refused)
        still = _modern(http, urls[1], "alice", "tasks/get", {"taskId": task_id})["result"]
        assert still["status"] == "input_required" and list(still["inputRequests"]) == [key]
        done = _modern(
            http, urls[1], "alice", "tasks/update", {"taskId": task_id, "inputResponses": answer}
        )
        assert "error" not in done
