"""A legacy session DELETEd through one worker stays deleted on every worker: another
worker holding a GET stream of it ends that stream within the keepalive period, answers
404 for it, and never writes its record back to Redis."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
import redis

from mcpgen.transports._keepalive import PROMPT
from tests.scale.harness import workers, workers_redis_url
from tests.scale.wire import frame, open_session, start_reading

pytestmark = pytest.mark.needs_redis

BOUND = PROMPT + 1.0  # the keepalive period, and a margin for a loaded machine


def record_exists(session_id: str) -> bool:
    with redis.Redis.from_url(workers_redis_url()) as client:
        key = "mcpgen:session:" + session_id
        return bool(client.exists(key)) or client.zscore("mcpgen:s-lru", session_id) is not None


@pytest.mark.slow
def test_a_delete_on_one_worker_ends_the_get_stream_on_the_other() -> None:
    with workers() as (urls, _), httpx.Client(timeout=10) as sync_http:
        a, b = urls
        session = open_session(sync_http, a, "alice")
        session_id = session["mcp-session-id"]

        async def scenario() -> float:
            async with httpx.AsyncClient(timeout=30) as http:
                get = {**session, "accept": "text/event-stream"}
                _, reading = await start_reading(http, b, get)  # its priming event is out
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
