"""The stores' tests share one throwaway redis-server (`redis_server.py`), stopped
when the session ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stores import redis_server


@pytest.fixture(scope="session", autouse=True)
def _stop_redis_at_the_end() -> Iterator[None]:
    yield
    if redis_server._server is not None:
        redis_server._server.close()
        redis_server._server = None
