"""A legacy session DELETEd through one worker stays deleted on every worker: another
worker holding a GET stream of it ends that stream within the keepalive period, answers
404 for it, and never writes its record back to Redis."""

from __future__ import annotations

import asyncio
import time

import httpx
import redis

from mcpgen.transports._keepalive import PROMPT
from tests.scale.harness import workers
from tests.scale.test_legacy_stream import Reader
from tests.scale.test_two_workers import frame, open_session
from tests.stores.redis_server import server as redis_server

BOUND = PROMPT + 1.0  # the keepalive period, and a margin for a loaded machine


def record_exists(session_id: str) -> bool:
    url = redis_server().url.rsplit("/", 1)[0] + "/1"  # the database `workers` uses
    with redis.Redis.from_url(url) as client:
        key = "mcpgen:s:" + session_id
        return bool(client.exists(key)) or client.zscore("mcpgen:s-used", session_id) is not None


def test_a_delete_on_one_worker_ends_the_get_stream_on_the_other() -> None:
    with workers() as (urls, _), httpx.Client(timeout=10) as sync_http:
        a, b = urls
        session = open_session(sync_http, a, "alice")
        session_id = session["mcp-session-id"]

        async def scenario() -> float:
            async with httpx.AsyncClient(timeout=30) as http:
                reader = Reader()
                get = {**session, "accept": "text/event-stream"}
                reading = asyncio.ensure_future(reader.read(http, b, get))
                await asyncio.wait_for(reader.opened.wait(), 10)
                assert reader.status == 200
                while not reader.events:  # the priming event: the stream is registered
                    await asyncio.sleep(0.02)
                assert record_exists(session_id)
                deleted = await http.delete(a, headers=session)
                assert deleted.status_code == 200, deleted.text
                started = time.monotonic()
                await asyncio.wait_for(reading, BOUND)  # B ends its stream by itself
                return time.monotonic() - started

        assert asyncio.run(scenario()) < BOUND
        for url in (b, a):
            ping = sync_http.post(url, content=frame(1, "ping"), headers=session)
            assert ping.status_code == 404, ping.text
        time.sleep(PROMPT + 0.5)  # a keepalive sweep on either worker would write it back
        assert not record_exists(session_id)
        ping = sync_http.post(b, content=frame(2, "ping"), headers=session)
        assert ping.status_code == 404, ping.text
