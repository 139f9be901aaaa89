"""What clients are told while a worker drains (in process, `McpAsgiApp.shutdown`).

A request the drain time cut off gets a JSON-RPC error with the id it sent, status 503,
in every era and for every Accept, a legacy one waiting for the client's answer to an
input request too; a 2025-03-26 batch gets an array with one such error
per request in it (not one error without an id, which a client cannot match). A stream
that would only wait, opened once the drain began, is not held open to the end of the
drain time (holding the drain with it): a legacy GET is answered 503, a listen stream
gets its final result at once, as the streams open when the drain began did."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from mcpgen import Context, InputRequired, Server, elicit_form
from mcpgen.stores import InMemoryTaskStore, StoreUnavailableError, TaskState
from tests.transports.asgidriver import LEGACY, Exchange, post, rpc

server = Server("drained")


RELEASE: list[asyncio.Event] = []


@server.tool(task="optional")
async def held() -> str:
    """A task that runs until the test releases it."""
    await RELEASE[-1].wait()
    return "released"


@server.tool
def confirm(ctx: Context) -> Any:
    """Asks the client, then answers."""
    if ctx.input("sure") is None:
        return InputRequired({"sure": elicit_form("Sure?", {"type": "object"})})
    return "confirmed"


@server.tool
async def ask(ctx: Context) -> str:
    """Awaits the client's answer where it is."""
    await ctx.elicit("Sure?", {"type": "object"}, timeout=3600)
    return "asked"


@server.tool
async def stuck() -> str:
    """Never answers on its own."""
    await asyncio.sleep(3600)
    return "never"


MODERN = {
    **LEGACY,
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "stuck",
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
STOPPED = "the worker stopped before it answered (drain time 0.2 s ran out)"


def _call(rid: Any, meta: bool = False) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "stuck", "arguments": {}}
    if meta:
        params["_meta"] = META
    return rpc(rid, "tools/call", params)


async def _session(app: Any, version: str) -> dict[str, str]:
    hello: dict[str, Any] = {"protocolVersion": version, "capabilities": {"elicitation": {}}}
    hello["clientInfo"] = {"name": "t", "version": "1"}
    _, headers, _ = await post(app, LEGACY, rpc(0, "initialize", hello))
    session = {**LEGACY, "mcp-session-id": headers["mcp-session-id"]}
    session["mcp-protocol-version"] = version
    await post(app, session, rpc(None, "notifications/initialized"))
    return session


async def _cut(era: str, body: Any, accept: str) -> tuple[int, Any]:
    """Send `body`, drain while it runs: (status, the decoded answer)."""
    app = server.asgi_app(shutdown_grace_seconds=0.2)
    headers = MODERN if era == "modern" else await _session(app, era)
    exchange = Exchange(app, "POST", {**headers, "accept": accept}, json.dumps(body).encode())
    await asyncio.sleep(0.2)  # the work is under way
    stopping = asyncio.ensure_future(app.shutdown())
    status, _ = await exchange.start()
    raw = await exchange.body()
    await stopping
    text = raw.decode()
    if not text.lstrip().startswith(("{", "[")):  # an SSE stream: its data line
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return status, json.loads(text)


def _stopped(answer: Any, rid: Any) -> None:
    assert answer == {
        "jsonrpc": "2.0",
        "id": rid,
        "error": {"code": -32603, "message": STOPPED},
    }


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
@pytest.mark.parametrize(
    ("era", "rid"),
    [("modern", 7), ("modern", "seven"), ("2025-11-25", 8), ("2025-11-25", "x" * 300)],
)
def test_a_cut_request_gets_a_503_error_with_its_id(era: str, rid: Any, accept: str) -> None:
    status, answer = asyncio.run(_cut(era, _call(rid, meta=era == "modern"), accept))
    if "event-stream" not in accept or status != 200:  # SSE: the error is the stream's reply
        assert status == 503
    _stopped(answer, rid)


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
def test_a_cut_batch_gets_one_error_per_request_with_its_id(accept: str) -> None:
    batch = [_call(1), rpc(None, "notifications/progress", {}), _call("two"), _call(3)]
    status, answer = asyncio.run(_cut("2025-03-26", batch, accept))
    if "event-stream" not in accept or status != 200:
        assert status == 503
    assert isinstance(answer, list), answer
    assert len(answer) == 3
    for reply, rid in zip(answer, [1, "two", 3], strict=True):
        _stopped(reply, rid)


TASKS_META = {
    **META,
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


async def _draining(late: str) -> tuple[int, bytes, bool]:
    """A drain held by a running task; the `late` stream ("get" or "listen") opened
    meanwhile: (its status, its body, whether the drain was still under way when the
    stream ended)."""
    RELEASE.append(asyncio.Event())
    app = server.asgi_app(shutdown_grace_seconds=60)
    session = await _session(app, "2025-11-25")
    task = rpc(1, "tools/call", {"name": "held", "arguments": {}, "_meta": TASKS_META})
    _, _, created = await post(app, {**MODERN, "mcp-name": "held"}, task)
    assert b'"resultType":"task"' in created, created
    stopping = asyncio.ensure_future(app.shutdown())
    await asyncio.sleep(0.1)
    if late == "get":
        exchange = Exchange(app, "GET", {**session, "accept": "text/event-stream"})
    else:
        listen = rpc(9, "subscriptions/listen", {"notifications": {}, "_meta": META})
        headers = {**MODERN, "mcp-method": "subscriptions/listen"}
        exchange = Exchange(app, "POST", headers, json.dumps(listen).encode())
    status, _ = await exchange.start()
    body = await exchange.body()
    still = not stopping.done()
    RELEASE[-1].set()
    await asyncio.wait_for(stopping, 20)
    return status, body, still


def test_a_legacy_get_stream_asked_for_during_a_drain_is_a_503() -> None:
    status, body, still = asyncio.run(_draining("get"))
    assert still
    assert status == 503
    assert json.loads(body)["error"]["message"] == "shutting down"


def test_a_listen_stream_opened_during_a_drain_gets_its_final_result_at_once() -> None:
    status, body, still = asyncio.run(_draining("listen"))
    assert still and status == 200
    frames = [
        json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")
    ]
    assert frames[0]["method"] == "notifications/subscriptions/acknowledged"
    assert frames[-1]["id"] == 9 and "result" in frames[-1]


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/event-stream"])
@pytest.mark.parametrize("tool", ["confirm", "ask"])
def test_a_legacy_request_waiting_for_the_clients_answer_gets_a_503_error(
    tool: str, accept: str
) -> None:
    """`confirm` returned its input request (the reply deferred, no work of its own
    left for a drain to cancel: its stream stayed open, unanswered); `ask` awaits the
    answer (with JSON only, its cancelled work was answered 202, as a notification).
    A JSON-only POST's input request goes out on the session's GET stream."""

    async def main() -> tuple[int, Any]:
        app = server.asgi_app(shutdown_grace_seconds=0.2)
        session = await _session(app, "2025-11-25")
        if "text/event-stream" not in accept:  # the input request's way to the client
            get = Exchange(app, "GET", {**session, "accept": "text/event-stream"})
            assert (await get.start())[0] == 200
        body = json.dumps(rpc(5, "tools/call", {"name": tool, "arguments": {}})).encode()
        exchange = Exchange(app, "POST", {**session, "accept": accept}, body)
        await asyncio.sleep(0.2)  # the input request is out
        stopping = asyncio.ensure_future(app.shutdown())
        status, _ = await exchange.start()
        raw = (await exchange.body()).decode()
        await asyncio.wait_for(stopping, 20)
        frames = [line[5:] for line in raw.splitlines() if line.startswith("data:")] or [raw]
        return status, json.loads(frames[-1])

    status, answer = asyncio.run(main())
    assert status == (503 if accept == "application/json" else 200)
    _stopped(answer, 5)


class _FailingAtTheEnd(InMemoryTaskStore):
    """A store that goes down once the drain begins (`down`)."""

    down = False

    async def put(self, state: TaskState) -> None:
        if self.down:
            raise StoreUnavailableError("redis at redis://127.0.0.1:1/0 is unavailable")
        await super().put(state)


def test_a_task_record_the_drain_cannot_write_is_logged_without_its_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A task id is all another client of its principal needs: the log names its first
    characters only, as it does a session's."""
    store = _FailingAtTheEnd()
    tasked = Server("drained-tasks", task_store=store)

    @tasked.tool(task="optional")
    async def forever() -> str:
        await asyncio.sleep(3600)
        return "never"

    async def main() -> str:
        app = tasked.asgi_app(shutdown_grace_seconds=0.1)
        task = rpc(1, "tools/call", {"name": "forever", "arguments": {}, "_meta": TASKS_META})
        _, _, created = await post(app, {**MODERN, "mcp-name": "forever"}, task)
        store.down = True
        await asyncio.wait_for(app.shutdown(), 30)
        return str(json.loads(created)["result"]["taskId"])

    with caplog.at_level(logging.WARNING, logger="mcpgen.server"):
        task_id = asyncio.run(main())
    lines = [r.getMessage() for r in caplog.records if "final state not written" in r.getMessage()]
    assert lines and all(task_id[:8] in line for line in lines)
    assert task_id not in caplog.text


def test_a_server_served_again_after_a_shutdown_keeps_its_listen_streams_open() -> None:
    """The drain's "end every listen at once" lasts until the shutdown is over."""

    async def main() -> bool:
        first = server.asgi_app(shutdown_grace_seconds=0.1)
        await first.shutdown()
        again = server.asgi_app()
        listen = rpc(9, "subscriptions/listen", {"notifications": {}, "_meta": META})
        headers = {**MODERN, "mcp-method": "subscriptions/listen"}
        exchange = Exchange(again, "POST", headers, json.dumps(listen).encode())
        await exchange.start()
        acknowledged = await exchange.event()
        assert acknowledged[1]["method"] == "notifications/subscriptions/acknowledged"
        await asyncio.sleep(0.3)
        still_open = not exchange.task.done()
        await exchange.disconnect()
        return still_open

    assert asyncio.run(main())


def test_what_arrives_during_a_drain_is_answered_as_ever() -> None:
    """While a drain waits for a task: a notification gets 202 and no body, a body that
    is no JSON a 400 parse error, a quick request its answer; never a 500."""

    async def main() -> list[tuple[int, bytes]]:
        RELEASE.append(asyncio.Event())
        app = server.asgi_app(shutdown_grace_seconds=60)
        session = await _session(app, "2025-11-25")
        task = rpc(1, "tools/call", {"name": "held", "arguments": {}, "_meta": TASKS_META})
        await post(app, {**MODERN, "mcp-name": "held"}, task)
        stopping = asyncio.ensure_future(app.shutdown())
        await asyncio.sleep(0.1)
        answers = []
        for body in (
            json.dumps(rpc(None, "notifications/progress", {"progressToken": 1, "progress": 1})),
            '{"jsonrpc": "2.0", "id": 3, "method": ',
            "\\udcff",
            json.dumps(rpc(4, "ping")),
        ):
            exchange = Exchange(app, "POST", session, body.encode(errors="surrogatepass"))
            status, _ = await exchange.start()
            answers.append((status, await exchange.body()))
        assert not stopping.done()
        RELEASE[-1].set()
        await asyncio.wait_for(stopping, 20)
        return answers

    (note, broken, binary, ping) = asyncio.run(main())
    assert note == (202, b"")
    assert broken[0] == 400 and json.loads(broken[1])["error"]["code"] == -32700
    assert binary[0] == 400
    assert ping[0] == 200 and json.loads(ping[1]) == {"jsonrpc": "2.0", "id": 4, "result": {}}
