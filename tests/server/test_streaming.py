"""Request-scoped notifications and cancellation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpgen._server import Pending
from tests.server.harness import Client, notification, request


def test_progress_only_with_a_token_and_strictly_increasing(client: Client) -> None:
    asyncio.run(
        client.areply(request(1, "tools/call", {"name": "steps", "arguments": {"count": 3}}))
    )
    assert client.channel.take() == []
    asyncio.run(
        client.areply(
            request(
                2, "tools/call", {"name": "steps", "arguments": {"count": 3}}, progressToken="p"
            )
        )
    )
    progress = [f["params"] for f in client.channel.take()]
    assert progress == [
        {"progressToken": "p", "progress": i, "total": 3, "message": f"step {i}"} for i in (1, 2, 3)
    ]


def test_progress_ignores_non_increasing_values() -> None:
    from mcpgen import Context, Server

    srv = Server("p")

    @srv.tool
    def jumpy(ctx: Context) -> str:
        for value in (1, 1, 0.5, 2):
            ctx.progress(value)
        return "ok"

    c = Client(srv)
    c.reply(request(1, "tools/call", {"name": "jumpy"}, progressToken=7))
    assert [f["params"]["progress"] for f in c.channel.take()] == [1, 2]


def test_logs_follow_the_requests_level(client: Client) -> None:
    async def levels(**meta: Any) -> list[str]:
        await client.areply(
            request(1, "tools/call", {"name": "steps", "arguments": {"count": 1}}, **meta)
        )
        return [
            f["params"]["level"]
            for f in client.channel.take()
            if f["method"] == "notifications/message"
        ]

    assert asyncio.run(levels()) == []  # no logLevel: no log messages at all
    assert asyncio.run(levels(**{"io.modelcontextprotocol/logLevel": "debug"})) == ["info", "debug"]
    assert asyncio.run(levels(**{"io.modelcontextprotocol/logLevel": "warning"})) == []


def test_notifications_come_before_the_reply(client: Client) -> None:
    order: list[str] = []
    client.channel.notify = lambda frame: order.append(json.loads(frame)["method"])  # type: ignore[method-assign]
    out = asyncio.run(
        client.areply(
            request(1, "tools/call", {"name": "steps", "arguments": {"count": 2}}, progressToken=1)
        )
    )
    order.append("reply:" + str(out["id"]))
    assert order == ["notifications/progress", "notifications/progress", "reply:1"]


def cancel_line(request_id: Any) -> bytes:
    return notification("notifications/cancelled", {"requestId": request_id, "reason": "user"})


def test_cancellation_by_integer_and_string_ids(client: Client) -> None:
    async def run(rid: Any) -> None:
        pending = client.send(request(rid, "tools/call", {"name": "wait"}))
        assert isinstance(pending, Pending)
        task = asyncio.get_running_loop().create_task(pending.coro)
        pending.bind(task)
        await asyncio.sleep(0)
        assert client.send(cancel_line(rid)) is None
        assert await task is None  # cancelled: no reply at all
        assert rid not in client.session.inflight

    asyncio.run(run(41))
    asyncio.run(run("req-41"))


def test_handlers_see_the_cancel_flag() -> None:
    from mcpgen import Context, Server

    seen: list[bool] = []
    srv = Server("c")

    @srv.tool
    async def polite(ctx: Context) -> str:
        while not ctx.cancelled:
            await asyncio.sleep(0)
        seen.append(ctx.cancelled)
        return "stopped"

    c = Client(srv)

    async def run() -> Any:
        pending = c.send(request(1, "tools/call", {"name": "polite"}))
        task = asyncio.get_running_loop().create_task(pending.coro)  # no bind: only the flag
        await asyncio.sleep(0)
        c.send(cancel_line(1))
        return await task

    assert asyncio.run(run()) is None
    assert seen == [True]


def test_unknown_and_invalid_cancellations_are_ignored(client: Client) -> None:
    for rid in (999, "nope", None, True, 1.5):
        assert client.send(cancel_line(rid)) is None
    assert client.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}') is None


def test_close_cancels_in_flight_work(client: Client) -> None:
    async def run() -> Any:
        pending = client.send(request(1, "tools/call", {"name": "wait"}))
        task = asyncio.get_running_loop().create_task(pending.coro)
        pending.bind(task)
        await asyncio.sleep(0)
        client.session.close()
        return await task

    assert asyncio.run(run()) is None
