"""Drive a Session with lines in memory: no sockets, no transport."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

from mcpgen import Channel, Server
from mcpgen._server import DEFERRED, Pending

VERSION = "2026-07-28"


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        **extra,
    }


def request(
    rid: Any,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    modern: bool = True,
    caps: dict[str, Any] | None = None,
    **meta_extra: Any,
) -> bytes:
    params = dict(params or {})
    if modern:
        params["_meta"] = meta(caps, **meta_extra)
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params or modern:
        body["params"] = params
    return json.dumps(body).encode()


def notification(method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


class Recorder(Channel):
    """Collects every frame the core sends besides direct replies."""

    def __init__(self, headers: dict[str, str] | None = None, principal: str | None = None) -> None:
        self.frames: list[tuple[str, dict[str, Any]]] = []
        self.headers = headers
        self.principal = principal
        self.tasks: list[asyncio.Task[Any]] = []

    def notify(self, frame: bytes) -> None:
        self.frames.append(("notify", json.loads(frame)))

    def request(self, frame: bytes) -> None:
        self.frames.append(("request", json.loads(frame)))

    def reply(self, frame: bytes) -> None:
        self.frames.append(("reply", json.loads(frame)))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        try:
            self.tasks.append(asyncio.get_running_loop().create_task(coro))
        except RuntimeError:  # a synchronous test: run the detached work to its end now
            asyncio.run(coro)

    def take(self, kind: str | None = None) -> list[dict[str, Any]]:
        out = [f for k, f in self.frames if kind is None or k == kind]
        self.frames = [(k, f) for k, f in self.frames if not (kind is None or k == kind)]
        return out


class Client:
    """A session plus helpers that resolve async outcomes and decode replies."""

    def __init__(self, server: Server, channel: Recorder | None = None) -> None:
        self.channel = channel or Recorder()
        self.session = server.session(self.channel)

    def send(self, line: bytes, channel: Recorder | None = None) -> Any:
        """The raw outcome (bytes, None, DEFERRED or Pending)."""
        return self.session.receive(line, channel or self.channel)

    def settled(self, line: bytes, channel: Recorder | None = None) -> Any:
        """The outcome once pending work has run to its end (a sync handler runs in a
        worker thread, so even its outcome starts as Pending)."""
        out = self.send(line, channel)
        if isinstance(out, Pending) and not _running():
            out = asyncio.run(out.coro)
        return out

    def reply(self, line: bytes, channel: Recorder | None = None) -> dict[str, Any] | None:
        out = self.send(line, channel)
        if isinstance(out, Pending):
            out = asyncio.run(out.coro) if not _running() else out
        if out is None or out is DEFERRED:
            return None
        return json.loads(out)  # type: ignore[no-any-return]

    async def areply(self, line: bytes, channel: Recorder | None = None) -> Any:
        out = self.send(line, channel)
        if isinstance(out, Pending):
            out = await out.coro
        if out is None or out is DEFERRED:
            return out
        return json.loads(out)

    def initialize(
        self, version: str = "2025-11-25", caps: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        params = {
            "protocolVersion": version,
            "capabilities": caps or {},
            "clientInfo": {"name": "legacy", "version": "1"},
        }
        result = self.reply(
            json.dumps(
                {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
            ).encode()
        )
        assert result is not None
        self.send(notification("notifications/initialized"))
        return result


def _running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
