"""The cost of Redis on the legacy hot path: one round trip per tools/call (the
session's load, which also restarts its idle timeout); nothing is saved when the
call changed nothing, and a JSON answer writes no SSE event."""

from __future__ import annotations

import asyncio

from tests.scale.harness import fresh_redis_url
from tests.scale.measure import build, legacy_calls


def test_a_legacy_tools_call_costs_one_redis_round_trip() -> None:
    calls = 40
    _, commands = asyncio.run(legacy_calls(build(fresh_redis_url()), calls))
    assert commands == calls
