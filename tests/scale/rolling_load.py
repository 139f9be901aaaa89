"""The mixed load `test_rolling` runs through nginx while the workers roll: legacy
sessions calling a tool, 2026-07-28 requests, a legacy GET stream that reconnects after
`Last-Event-ID` whenever it ends, a listen stream opened again whenever it ends, and
tasks polled to their end. Every loop is bounded in count; all stop on `stop`.

What a client retries (and nothing else): a request whose connection failed before the
request was written (`httpx.ConnectError`: refused, or reset while connecting), at most
`RETRIES` times; an SSE stream that ended, by opening it again (with `Last-Event-ID` for
the legacy GET stream), as the protocol has clients do. Any other outcome of a request
(a read error, a status other than 200/202, a JSON-RPC error) is a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcpgen import Client, ToolTask
from tests.scale.wire import (
    CHANGED,
    INITIALIZE,
    INITIALIZED,
    LEGACY,
    META,
    MODERN,
    frame,
    sse_events,
)

RETRIES = 5
MOST = 5000  # requests per loop, at most
TERMINAL = {"completed", "failed", "cancelled"}


def _answer(response: httpx.Response) -> Any:
    """The JSON-RPC message a response carries (the last of an SSE response)."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        datas = [ln[5:] for ln in response.text.splitlines() if ln.startswith("data:")]
        datas = [d for d in datas if d.strip()]
        return json.loads(datas[-1]) if datas else None
    return response.json() if response.content else None


@dataclass
class Load:
    http: httpx.AsyncClient
    url: str
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    requests: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)
    timings: list[tuple[float, float]] = field(default_factory=list)  # (began, seconds)
    stream: list[tuple[str, Any]] = field(default_factory=list)  # (event id, message)
    reconnects: int = 0
    changes_made: int = 0
    listens: list[str] = field(default_factory=list)  # how each listen stream ended
    tasks: dict[str, Any] = field(default_factory=dict)  # id -> last status seen

    async def post(self, body: bytes, headers: dict[str, str]) -> httpx.Response | None:
        """One request, retried only when its connection failed before it was written."""
        for _ in range(RETRIES + 1):
            began = time.monotonic()
            try:
                response = await self.http.post(self.url, content=body, headers=headers)
            except httpx.ConnectError:
                self.retries += 1
                await asyncio.sleep(0.1)
                continue
            except httpx.HTTPError as exc:
                self.requests += 1
                self.failures.append(f"{type(exc).__name__}: {exc}")
                return None
            self.requests += 1
            self.timings.append((began, time.monotonic() - began))
            if response.status_code not in (200, 202):
                self.failures.append(f"HTTP {response.status_code}: {response.text[:200]}")
                return None
            return response
        self.failures.append("the connection failed before the request, every time")
        return None

    async def call(self, headers: dict[str, str], rid: int, name: str, args: Any) -> Any:
        """A tools/call's result, or None (a failure, counted)."""
        params: dict[str, Any] = {"name": name, "arguments": args}
        if headers.get("mcp-protocol-version") == "2026-07-28":
            params["_meta"] = META
            headers = {**headers, "mcp-method": "tools/call", "mcp-name": name}
        response = await self.post(frame(rid, "tools/call", params), headers)
        if response is None:
            return None
        message = _answer(response)
        if not isinstance(message, dict) or "result" not in message:
            self.failures.append(f"{name}: {message}")
            return None
        return message["result"]

    async def session(self) -> dict[str, str] | None:
        response = await self.post(INITIALIZE, LEGACY)
        if response is None:
            return None
        session = {**LEGACY, "mcp-session-id": response.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        await self.post(INITIALIZED, session)
        return session

    # -- the loops -----------------------------------------------------------------------------
    async def legacy(self, tag: str) -> None:
        session = await self.session()
        for n in range(MOST):
            if session is None or self.stop.is_set():
                return
            result = await self.call(session, n + 1, "greet", {"name": f"{tag}{n}"})
            if result is not None and result["content"][0]["text"] != f"Hello, {tag}{n}!":
                self.failures.append(f"{tag}{n}: {result}")

    async def modern(self, tag: str) -> None:
        for n in range(MOST):
            if self.stop.is_set():
                return
            result = await self.call(MODERN, n + 1, "greet", {"name": f"{tag}{n}"})
            if result is not None and result["content"][0]["text"] != f"Hello, {tag}{n}!":
                self.failures.append(f"{tag}{n}: {result}")

    async def changes(self, session: dict[str, str]) -> None:
        """Tool-list changes made through the stream's own session, one every 0.2 s."""
        for n in range(MOST):
            if self.stop.is_set():
                return
            if await self.call(session, 10_000 + n, "test_trigger_tool_change", {}) is not None:
                self.changes_made += 1
            await asyncio.sleep(0.2)

    async def follow(self, session: dict[str, str]) -> None:
        """The session's GET stream, opened again after `Last-Event-ID` whenever it ends."""
        headers = {**session, "accept": "text/event-stream"}
        for _ in range(MOST):
            with contextlib.suppress(httpx.HTTPError):  # a stream cut: reconnect
                async with self.http.stream("GET", self.url, headers=headers) as response:
                    if response.status_code != 200:
                        self.failures.append(f"GET stream: HTTP {response.status_code}")
                        return
                    async for event_id, message in sse_events(response):
                        if event_id is not None:
                            self.stream.append((event_id, message))
                            headers["last-event-id"] = event_id
            if self.stop.is_set():
                return
            self.reconnects += 1
            await asyncio.sleep(0.1)

    async def listen(self) -> None:
        """A listen stream, opened again whenever it ends; how each ended is kept."""
        params = {"notifications": {"toolsListChanged": True}, "_meta": META}
        headers = {**MODERN, "mcp-method": "subscriptions/listen"}
        for n in range(MOST):
            last: Any = None
            try:
                body = frame(n + 1, "subscriptions/listen", params)
                async with self.http.stream("POST", self.url, content=body, headers=headers) as r:
                    async for _, message in sse_events(r):
                        last = message
            except httpx.HTTPError as exc:
                self.listens.append(f"cut: {type(exc).__name__}")
            else:
                ended = isinstance(last, dict) and last.get("id") == n + 1 and "result" in last
                self.listens.append("result" if ended else f"other: {last}")
            if self.stop.is_set():
                return

    async def run_tasks(self, seconds: float) -> None:
        """Tasks of `seconds` each, one after the other, each polled to its end."""
        async with Client.http(self.url, era="modern") as client:
            for _ in range(MOST):
                if self.stop.is_set():
                    return
                try:
                    task = await client.call_tool("slow_compute", {"seconds": seconds}, task=True)
                    assert isinstance(task, ToolTask)
                    await self.poll(client, task.id, 60)
                except Exception as exc:  # counted, not raised: the other loops go on
                    self.failures.append(f"task: {type(exc).__name__}: {exc}")

    async def poll(self, client: Client, task_id: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            status = await client.get_task(task_id)
            self.tasks[task_id] = status
            if status.status in TERMINAL:
                return
            await asyncio.sleep(0.2)


def changes_heard(load: Load) -> list[str]:
    return [eid for eid, message in load.stream if message and message.get("method") == CHANGED]


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0
