"""A legacy session whose client only listens on its GET stream: the open stream keeps
the session's record alive in the store past the idle timeout (`_keepalive`), and once
the stream closes the session idles out like any other."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import cast

import httpx
import pytest

from mcpgen.stores import InMemorySessionStore
from mcpgen.transports import McpAsgiApp
from tests.server.conftest import build_server
from tests.transports.httpharness import rpc, serve
from tests.transports.test_http_legacy import initialize

IDLE = 1.5  # the sweep runs every IDLE/4 s: room for a loaded machine


class Listening:
    """A GET stream read in the background: its task and the status it answered."""

    task: asyncio.Task[None]

    def __init__(self) -> None:
        self.status = 0
        self.opened = asyncio.Event()


@contextlib.asynccontextmanager
async def get_stream(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[Listening]:
    """The session's GET stream, open from its first line to the block's end."""
    listening = Listening()

    async def listen() -> None:
        get = {**headers, "accept": "text/event-stream"}
        async with client.stream("GET", url, headers=get) as response:
            listening.status = response.status_code
            async for _ in response.aiter_lines():
                listening.opened.set()

    reader = listening.task = asyncio.ensure_future(listen())
    try:
        await asyncio.wait_for(listening.opened.wait(), 5)
        yield listening
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


@pytest.fixture
def served(http: httpx.Client) -> Iterator[tuple[McpAsgiApp, str, dict[str, str]]]:
    """An HTTP app whose sessions idle out after IDLE seconds, served, and a legacy
    session of it: the app, its URL and the session's headers."""
    app = build_server().asgi_app(session_idle_seconds=IDLE)
    with serve(app) as (url, _):
        yield app, url, initialize(http, url)


@pytest.mark.slow
def test_an_open_get_stream_keeps_the_session_and_its_end_lets_it_expire(
    http: httpx.Client, served: tuple[McpAsgiApp, str, dict[str, str]]
) -> None:
    app, url, headers = served
    store = cast("InMemorySessionStore", app.store)

    async def scenario() -> None:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            get_stream(client, url, headers) as listening,
        ):
            assert listening.status == 200
            await asyncio.sleep(3 * IDLE)  # no request meanwhile: only the stream
            assert not listening.task.done()
            assert store.sweep() == 0  # the record was refreshed, not idle
            assert len(store) == 1
        await asyncio.sleep(2 * IDLE)  # now nothing keeps it

    asyncio.run(asyncio.wait_for(scenario(), 30))
    ping = http.post(url, content=rpc(1, "ping"), headers=headers)
    assert ping.status_code == 404, ping.text
    assert len(store) == 0


@pytest.mark.slow
def test_a_session_with_a_get_stream_is_usable_past_the_idle_timeout(
    served: tuple[McpAsgiApp, str, dict[str, str]],
) -> None:
    _, url, headers = served

    async def scenario() -> int:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            get_stream(client, url, headers),
        ):
            await asyncio.sleep(3 * IDLE)
            ping = await client.post(url, content=rpc(2, "ping"), headers=headers)
            return ping.status_code

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) == 200
