"""Raw HTTP helpers the scale tests share: JSON-RPC frames, a legacy session opened by
hand (sync or async), SSE streams read in the background, and bounded waits.

They speak to a worker or to nginx alike: a URL and a session's headers are all they
need, so a test can tell which worker served what.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

CHANGED = "notifications/tools/list_changed"
LEGACY = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
MODERN = {**LEGACY, "mcp-protocol-version": "2026-07-28"}
META = {  # a modern request's `_meta`
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def frame(rid: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    """A JSON-RPC request (a notification when `rid` is None), params always present."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
    if rid is not None:
        body["id"] = rid
    return json.dumps(body).encode()


INITIALIZE = frame(
    0,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
)
INITIALIZED = frame(None, "notifications/initialized")


def _session(headers: dict[str, str], response: httpx.Response) -> dict[str, str]:
    """The headers of every later request of the session `response` opened."""
    assert response.status_code == 200, response.text
    session = {**headers, "mcp-session-id": response.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    return session


def open_session(http: httpx.Client, url: str, user: str) -> dict[str, str]:
    """A 2025-11-25 session of `user` (the `x-user` header), initialized."""
    headers = {**LEGACY, "x-user": user}
    session = _session(headers, http.post(url, content=INITIALIZE, headers=headers))
    done = http.post(url, content=INITIALIZED, headers=session)
    assert done.status_code == 202
    return session


async def open_session_async(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """A 2025-11-25 session, initialized, with no user."""
    session = _session(LEGACY, await http.post(url, content=INITIALIZE, headers=LEGACY))
    done = await http.post(url, content=INITIALIZED, headers=session)
    assert done.status_code == 202
    return session


def sse_fields(text: str) -> list[dict[str, str]]:
    """The `id`, `data` and `event` fields of each SSE event of a whole body."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(":")
            if key in ("id", "data", "event"):
                fields[key] = value.removeprefix(" ")
        if fields:
            events.append(fields)
    return events


async def sse_events(response: httpx.Response) -> AsyncIterator[tuple[str | None, Any]]:
    """(event id, message) of each SSE event of `response` with an id or data; None
    stands for what an event lacks (a priming event has an id and no data)."""
    block: list[str] = []
    async for line in response.aiter_lines():
        if line:
            block.append(line)
            continue
        ids = [ln[3:].strip() for ln in block if ln.startswith("id:")]
        data = "".join(ln[5:].strip() for ln in block if ln.startswith("data:"))
        if ids or data:
            yield (ids[0] if ids else None, json.loads(data) if data else None)
        block = []


async def until(condition: Callable[[], bool], tries: int) -> None:
    """Wait until `condition` holds, looking every 20 ms at most `tries` times."""
    for _ in range(tries):
        if condition():
            return
        await asyncio.sleep(0.02)


class Reader:
    """One GET stream read in the background: (event id, message) pairs; a priming
    event (an id, no data) is kept as (id, None)."""

    def __init__(self) -> None:
        self.events: list[tuple[str | None, dict[str, Any] | None]] = []
        self.status = 0
        self.opened = asyncio.Event()

    def changes(self) -> list[str | None]:
        return [eid for eid, msg in self.events if msg and msg.get("method") == CHANGED]

    def last_id(self) -> str:
        ids = [eid for eid, _ in self.events if eid]
        assert ids, self.events
        return ids[-1]

    async def read(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        async with http.stream("GET", url, headers=headers) as response:
            self.status = response.status_code
            self.opened.set()
            async for event in sse_events(response):
                self.events.append(event)


async def start_reading(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> tuple[Reader, asyncio.Task[None]]:
    """A GET stream read in the background, once it answered 200 and its first event
    (the stream is registered once that is out) came, or 4 s passed."""
    reader = Reader()
    task = asyncio.ensure_future(reader.read(http, url, headers))
    try:
        await asyncio.wait_for(reader.opened.wait(), 10)
        assert reader.status == 200
        await until(lambda: bool(reader.events), 200)
    except BaseException:
        task.cancel()
        raise
    return reader, task


@contextlib.asynccontextmanager
async def get_stream(
    http: httpx.AsyncClient, url: str, session: dict[str, str], last_event_id: str | None = None
) -> AsyncIterator[Reader]:
    """The session's GET stream (resumed after `last_event_id`) for the block's length."""
    headers = {**session, "accept": "text/event-stream"}
    if last_event_id is not None:
        headers["last-event-id"] = last_event_id
    reader, task = await start_reading(http, url, headers)
    try:
        yield reader
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        await asyncio.sleep(0.3)  # the worker sees the disconnect


async def settle(reader: Reader, count: int) -> None:
    """Wait until `reader` has `count` changes, then a little longer (a duplicate would
    arrive meanwhile)."""
    await until(lambda: len(reader.changes()) >= count, 250)
    await asyncio.sleep(0.5)
