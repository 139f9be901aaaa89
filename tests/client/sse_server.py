"""A small server on the deprecated HTTP+SSE transport (2024-11-05), for client tests.

A plain ASGI app run by uvicorn on 127.0.0.1 in a thread. `GET /sse` opens a session
stream whose first event is `endpoint` (a relative `/messages?session=ID` unless told
otherwise); `POST /messages?session=ID` takes one JSON-RPC message and answers 202,
the answer goes on the stream. Any other request answers `other_status` (405 by
default, as a server knowing nothing of Streamable HTTP would).

Methods: initialize (answers `version`), ping, tools/list, tools/call of `echo`
(text back), `ask` (a server-to-client `elicitation/create` mid-call), `notify`
(a `notifications/message` log, then the result), `slow` (answers after 30 s,
unless cancelled) and `hang_up` (closes the stream instead of answering).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import uvicorn

from tests.transports.httpharness import running

Json = dict[str, Any]
TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "ask", "notify", "slow")
]


@dataclass
class Session:
    queue: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    waiting: dict[Any, asyncio.Future[Json]] = field(default_factory=dict)
    tasks: dict[Any, asyncio.Task[None]] = field(default_factory=dict)

    def send(self, message: Json) -> None:
        data = json.dumps(message)
        self.queue.put_nowait(f"event: message\ndata: {data}\n\n".encode())


@dataclass
class OldServer:
    version: str = "2024-11-05"
    endpoint: str | None = None  # the endpoint event's data (None: the relative default)
    endpoint_delay: float = 0.0  # seconds before the endpoint event (-1: never sent)
    other_status: int = 405  # what a POST (or anything) outside the two endpoints gets
    other_json: str = ""  # its body: text, or a JSON-RPC error "idless" or "addressed"
    post_status: int = 202  # what the message endpoint answers (404: "no such session")
    sessions: dict[str, Session] = field(default_factory=dict)
    received: list[Json] = field(default_factory=list)  # every message POSTed to us
    requests: list[str] = field(default_factory=list)  # "METHOD PATH" of every request
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    # -- ASGI ------------------------------------------------------------------------------------
    async def __call__(self, scope: Json, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        self.requests.append(f"{method} {path}")
        if method == "GET" and path == "/sse":
            await self._stream(receive, send)
        elif method == "POST" and path == "/messages":
            query = parse_qs(scope["query_string"].decode())
            await self._message(query.get("session", [""])[0], receive, send)
        elif self.other_json:
            message = json.loads(await _body(receive) or b"{}")
            rid = message.get("id") if self.other_json == "addressed" else None
            error = {"code": -32600, "message": f"method {method} not allowed here"}
            answer = json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode()
            await _plain(send, self.other_status, answer, b"application/json")
        else:
            await _plain(send, self.other_status, b"not here")

    async def _stream(self, receive: Any, send: Any) -> None:
        sid = f"s{next(self.ids)}"
        session = self.sessions[sid] = Session()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                ],
            }
        )

        async def announce() -> None:
            if self.endpoint_delay < 0:
                return
            await asyncio.sleep(self.endpoint_delay)
            data = self.endpoint or f"/messages?session={sid}"
            session.queue.put_nowait(f": hello\nevent: endpoint\ndata: {data}\n\n".encode())

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            session.queue.put_nowait(None)

        tasks = [asyncio.ensure_future(announce()), asyncio.ensure_future(disconnected())]
        try:
            while (chunk := await session.queue.get()) is not None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            for task in [*tasks, *session.tasks.values()]:
                task.cancel()
            self.sessions.pop(sid, None)
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _message(self, sid: str, receive: Any, send: Any) -> None:
        body = await _body(receive)
        session = self.sessions.get(sid)
        if session is None or self.post_status != 202:
            await _plain(send, self.post_status if session else 404, b"Could not find session")
            return
        message = json.loads(body)
        self.received.append(message)
        await _plain(send, 202, b"Accepted")
        if "method" not in message:  # the client's answer to our request
            future = session.waiting.pop(message.get("id"), None)
            if future is not None:
                future.set_result(message)
        elif message["method"] == "notifications/cancelled":
            task = session.tasks.pop(message["params"]["requestId"], None)
            if task is not None:
                task.cancel()
        elif "id" in message:
            rid = message["id"]
            session.tasks[rid] = asyncio.ensure_future(self._answer(session, message))
            session.tasks[rid].add_done_callback(lambda _: session.tasks.pop(rid, None))

    # -- the protocol ----------------------------------------------------------------------------
    async def _answer(self, session: Session, message: Json) -> None:
        rid, method, params = message["id"], message["method"], message.get("params") or {}
        result: Json
        if method == "initialize":
            result = {
                "protocolVersion": self.version,
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "old-sse", "version": "0.1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            result = await self._call(session, params["name"], params.get("arguments") or {})
        else:
            session.send(
                {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": method}}
            )
            return
        session.send({"jsonrpc": "2.0", "id": rid, "result": result})

    async def _call(self, session: Session, name: str, arguments: Json) -> Json:
        if name == "echo":
            text = str(arguments.get("text"))
        elif name == "notify":
            session.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "working", "logger": "old"},
                }
            )
            text = "notified"
        elif name == "hang_up":  # end the session's stream mid-call
            session.queue.put_nowait(None)
            await asyncio.sleep(30)
            text = "never"
        elif name == "ask":
            ask_id = f"ask-{next(self.ids)}"
            future = session.waiting[ask_id] = asyncio.get_running_loop().create_future()
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            session.send(
                {
                    "jsonrpc": "2.0",
                    "id": ask_id,
                    "method": "elicitation/create",
                    "params": {"message": "Your name?", "requestedSchema": schema},
                }
            )
            answer = await future
            text = f"Hello, {answer['result']['content']['name']}!"
        else:
            await asyncio.sleep(30)
            text = "slept"
        return {"content": [{"type": "text", "text": text}]}


async def _body(receive: Any) -> bytes:
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            return body


async def _plain(send: Any, status: int, body: bytes, ctype: bytes = b"text/plain") -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", ctype)]}
    )
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def serve(app: OldServer) -> Iterator[str]:
    """Run `app` on a free loopback port; yields its base URL (`http://127.0.0.1:PORT`)."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        loop="asyncio",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    with running(uvicorn.Server(config)) as base:
        yield base
