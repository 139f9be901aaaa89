"""A transport built from `mcpgen.transports` alone: a WebSocket-style connection (one
message per socket frame; two asyncio queues stand for the socket) serving real
requests of both eras against a Server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

from mcpgen import Context, McpError, Server
from mcpgen.transports import Channel, ServerPort, deliver
from tests.server.conftest import build_server

# -- the transport: everything it needs comes from mcpgen.transports --------------------------


class SocketConnection(Channel):
    """One socket: every frame the server sends is one message out, in order."""

    def __init__(self, server: ServerPort, inbox: asyncio.Queue[bytes | None]) -> None:
        self.inbox = inbox
        self.outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.tasks: set[asyncio.Task[Any]] = set()
        self.session = server.session(self)

    def notify(self, frame: bytes) -> None:
        self.outbox.put_nowait(frame)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def serve(self) -> None:
        """Until the peer closes the socket (None)."""
        try:
            while (frame := await self.inbox.get()) is not None:
                deliver(self.session.receive(frame, self), self)
        finally:
            self.session.close()
            for task in list(self.tasks):
                task.cancel()


# -- the peer ---------------------------------------------------------------------------------
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def message(rid: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        body["id"] = rid
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


class Peer:
    def __init__(self, server: Server) -> None:
        self.inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.connection = SocketConnection(server, self.inbox)
        self.serving = asyncio.ensure_future(self.connection.serve())

    def send(self, frame: bytes) -> None:
        self.inbox.put_nowait(frame)

    async def next(self) -> dict[str, Any]:
        frame = await asyncio.wait_for(self.connection.outbox.get(), 5)
        return json.loads(frame)  # type: ignore[no-any-return]

    async def until_reply(self, rid: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Every frame before the reply to `rid`, and the reply."""
        before = []
        while (frame := await self.next()).get("id") != rid or "method" in frame:
            before.append(frame)
        return before, frame

    async def close(self) -> None:
        self.send_eof()
        await asyncio.wait_for(self.serving, 5)

    def send_eof(self) -> None:
        self.inbox.put_nowait(None)


def make_server() -> tuple[Server, asyncio.Event]:
    server = build_server()
    cancelled = asyncio.Event()

    @server.tool
    async def block(ctx: Context) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    @server.tool
    def refuse() -> str:
        raise McpError(-32602, "refused")

    return server, cancelled


def test_modern_requests_with_progress_async_tools_and_cancellation() -> None:
    async def run() -> None:
        server, cancelled = make_server()
        peer = Peer(server)
        # A tools/call whose async handler reports progress: notifications, then the reply.
        meta = {**MODERN_META, "progressToken": "p1"}
        peer.send(
            message(1, "tools/call", {"name": "steps", "arguments": {"count": 2}, "_meta": meta})
        )
        before, reply = await peer.until_reply(1)
        progress = [
            f["params"]["progress"] for f in before if f["method"] == "notifications/progress"
        ]
        assert progress == [1, 2]
        assert reply["result"]["content"][0]["text"] == "2 steps"
        # A sync tool answers at once; an error reply carries its code.
        peer.send(
            message(
                2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": MODERN_META}
            )
        )
        assert (await peer.until_reply(2))[1]["result"]["content"][0]["text"] == "hi"
        peer.send(
            message(3, "tools/call", {"name": "refuse", "arguments": {}, "_meta": MODERN_META})
        )
        error = (await peer.until_reply(3))[1]["error"]
        assert error == {"code": -32602, "message": "refused"}  # no "data": null
        # Cancellation reaches the running handler, and the request gets no reply.
        peer.send(
            message("c", "tools/call", {"name": "block", "arguments": {}, "_meta": MODERN_META})
        )
        await asyncio.sleep(0.05)
        peer.send(message(None, "notifications/cancelled", {"requestId": "c"}))
        await asyncio.wait_for(cancelled.wait(), 5)
        peer.send(
            message(
                4,
                "tools/call",
                {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META},
            )
        )
        before, reply = await peer.until_reply(4)
        assert before == []  # the cancelled request left nothing behind
        assert reply["result"]["content"][0]["text"] == "3.0"
        await peer.close()

    asyncio.run(run())


def test_legacy_session_with_input_requests_over_the_same_transport() -> None:
    async def run() -> None:
        server, _ = make_server()
        peer = Peer(server)
        caps = {"elicitation": {}}
        info = {"name": "ws-peer", "version": "1"}
        init = {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": info}
        peer.send(message(0, "initialize", init))
        _, reply = await peer.until_reply(0)
        assert reply["result"]["protocolVersion"] == "2025-11-25"
        peer.send(message(None, "notifications/initialized"))
        peer.send(message(1, "tools/call", {"name": "steps", "arguments": {"count": 1}}))
        assert (await peer.until_reply(1))[1]["result"]["content"][0]["text"] == "1 steps"
        # The handler asks for input: a real elicitation request goes out on the socket,
        # the answer comes back on it, and the same call then gets its reply.
        peer.send(message(2, "tools/call", {"name": "confirm", "arguments": {"action": "ship"}}))
        ask = await peer.next()
        assert ask["method"] == "elicitation/create"
        answer = {"action": "accept", "content": {"sure": True}}
        peer.send(json.dumps({"jsonrpc": "2.0", "id": ask["id"], "result": answer}).encode())
        _, reply = await peer.until_reply(2)
        assert reply["result"]["content"][0]["text"] == "accept:ship:{'sure': True}"
        await peer.close()

    asyncio.run(run())


def test_closing_the_socket_cancels_work_in_flight() -> None:
    async def run() -> None:
        server, cancelled = make_server()
        peer = Peer(server)
        peer.send(
            message(1, "tools/call", {"name": "block", "arguments": {}, "_meta": MODERN_META})
        )
        await asyncio.sleep(0.05)
        await peer.close()
        await asyncio.wait_for(cancelled.wait(), 5)
        assert peer.connection.outbox.empty()  # a cancelled request gets no reply

    asyncio.run(run())
