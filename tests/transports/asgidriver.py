"""Drive an ASGI app in-process, one request at a time, with control over when the
client stops reading and when it disconnects (what a real socket cannot show)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class Exchange:
    """One HTTP request to `app`; the response arrives through `status`, `body` and
    `event`. `disconnect()` is the client going away."""

    def __init__(
        self,
        app: Any,
        method: str,
        headers: dict[str, str],
        body: bytes = b"",
        principal: str | None = None,
        client: str | None = None,
    ) -> None:
        self.scope: dict[str, Any] = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "headers": [
                (k.lower().encode(), v.encode())
                for k, v in {"host": "127.0.0.1:8000", **headers}.items()
            ],
            "server": ("127.0.0.1", 8000),
            "query_string": b"",
        }
        if principal is not None:
            self.scope["mcpgen.principal"] = principal
        if client is not None:  # the peer's address, as a server puts it in the scope
            self.scope["client"] = (client, 50000)
        self._body = body
        self._asked = False
        self._gone = asyncio.Event()
        self._sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._buffer = b""
        self.ended = False
        self.task = asyncio.ensure_future(app(self.scope, self._receive, self._send))

    async def _receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": self._body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        await self._sent.put(message)

    async def _next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self._sent.get(), 5)

    async def start(self) -> tuple[int, dict[str, str]]:
        message = await self._next()
        assert message["type"] == "http.response.start", message
        headers = {k.decode(): v.decode() for k, v in message["headers"]}
        return message["status"], headers

    async def body(self) -> bytes:
        chunks = []
        while not self.ended:
            chunks.append(await self._chunk())
        return b"".join(chunks)

    async def _chunk(self) -> bytes:
        message = await self._next()
        assert message["type"] == "http.response.body", message
        self.ended = not message.get("more_body", False)
        body: bytes = message.get("body", b"")
        return body

    async def block(self, comments: bool = False) -> dict[str, str] | None:
        """The next SSE block as its fields, comments skipped unless `comments` (then
        under the name ""); None at the end."""
        while True:
            if b"\n\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n\n", 1)
                fields: dict[str, str] = {}
                for line in raw.decode().split("\n"):
                    if line.startswith(":") and not comments:
                        continue
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
                if fields:
                    return fields
                continue
            if self.ended:
                return None
            self._buffer += await self._chunk()

    async def event(self) -> tuple[str | None, Any]:
        """The next SSE event that carries data: (its id, the decoded frame)."""
        while True:
            fields = await self.block()
            assert fields is not None, "the stream ended"
            if fields.get("data"):
                return fields.get("id"), json.loads(fields["data"])

    def pending(self) -> int:
        """Messages the app sent that the client has not read."""
        return self._sent.qsize()

    async def disconnect(self) -> None:
        self._gone.set()
        await asyncio.wait_for(self.task, 5)


async def post(
    app: Any,
    headers: dict[str, str],
    frame: dict[str, Any],
    principal: str | None = None,
    client: str | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """A whole POST exchange: (status, headers, body)."""
    exchange = Exchange(app, "POST", headers, json.dumps(frame).encode(), principal, client)
    status, response_headers = await exchange.start()
    body = await exchange.body()
    await asyncio.wait_for(exchange.task, 5)
    return status, response_headers, body


def rpc(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        frame["id"] = rid
    if params is not None:
        frame["params"] = params
    return frame


async def initialize(
    app: Any, version: str = "2025-11-25", principal: str | None = None, client: str | None = None
) -> dict[str, str]:
    """A legacy session, initialized; returns the headers its requests carry."""
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "driver", "version": "1"},
    }
    status, headers, body = await post(app, LEGACY, rpc(0, "initialize", params), principal, client)
    assert status == 200, body
    session = {**LEGACY, "mcp-session-id": headers["mcp-session-id"]}
    session["mcp-protocol-version"] = version
    initialized = rpc(None, "notifications/initialized")
    status, _, _ = await post(app, session, initialized, principal, client)
    assert status == 202
    return session


def reply(body: bytes) -> Any:
    """The JSON-RPC reply of a POST answered in JSON or in SSE."""
    text = body.decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    frames = [
        json.loads(line[len("data: ") :])
        for line in text.split("\n")
        if line.startswith("data: ") and line[len("data: ") :].strip()
    ]
    return frames[-1]
