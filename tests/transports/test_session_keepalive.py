"""A legacy session whose client only listens on its GET stream: the open stream keeps
the session's record alive in the store past the idle timeout (`_keepalive`), and once
the stream closes the session idles out like any other."""

from __future__ import annotations

import asyncio
import contextlib
from typing import cast

import httpx

from mcpgen.stores import InMemorySessionStore
from tests.server.conftest import build_server
from tests.transports.httpharness import rpc, serve
from tests.transports.test_http_legacy import initialize

IDLE = 0.6


def test_an_open_get_stream_keeps_the_session_and_its_end_lets_it_expire() -> None:
    app = build_server().asgi_app(session_idle_seconds=IDLE)
    store = cast("InMemorySessionStore", app.store)
    with serve(app) as (url, _), httpx.Client(timeout=10) as http:
        headers = initialize(http, url)
        opened = asyncio.Event()

        async def listen(client: httpx.AsyncClient) -> None:
            get = {**headers, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=get) as response:
                assert response.status_code == 200
                async for _ in response.aiter_lines():
                    opened.set()

        async def scenario() -> None:
            async with httpx.AsyncClient(timeout=10) as client:
                reader = asyncio.ensure_future(listen(client))
                await asyncio.wait_for(opened.wait(), 5)
                await asyncio.sleep(3 * IDLE)  # no request meanwhile: only the stream
                assert not reader.done()
                assert store.sweep() == 0  # the record was refreshed, not idle
                assert len(store) == 1
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
            await asyncio.sleep(2 * IDLE)  # now nothing keeps it

        asyncio.run(asyncio.wait_for(scenario(), 30))
        ping = http.post(url, content=rpc(1, "ping"), headers=headers)
        assert ping.status_code == 404, ping.text
        assert len(store) == 0


def test_a_session_with_a_get_stream_is_usable_past_the_idle_timeout() -> None:
    app = build_server().asgi_app(session_idle_seconds=IDLE)
    with serve(app) as (url, _), httpx.Client(timeout=10) as http:
        headers = initialize(http, url)
        opened = asyncio.Event()

        async def listen(client: httpx.AsyncClient) -> None:
            get = {**headers, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=get) as response:
                async for _ in response.aiter_lines():
                    opened.set()

        async def scenario() -> int:
            async with httpx.AsyncClient(timeout=10) as client:
                reader = asyncio.ensure_future(listen(client))
                await asyncio.wait_for(opened.wait(), 5)
                await asyncio.sleep(3 * IDLE)
                ping = await client.post(url, content=rpc(2, "ping"), headers=headers)
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader
                return ping.status_code

        assert asyncio.run(asyncio.wait_for(scenario(), 30)) == 200
