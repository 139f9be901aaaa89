"""The era verdict cache: an object the client owns (injectable), each verdict trusted
for its TTL, after which the client probes the endpoint again."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from mcpgen import Client
from mcpgen._client import RequestId, Verdict, VerdictCache, shared_verdicts
from mcpgen.transports._links import StdioLink

FAKE = [sys.executable, str(Path(__file__).with_name("fake_legacy_server.py")), "error"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_verdicts_expire_after_their_ttl() -> None:
    clock = Clock()
    cache = VerdictCache(ttl=10, clock=clock)
    cache.put("a", Verdict("legacy", "2025-03-26"))
    clock.now += 9.9
    assert cache.get("a") == Verdict("legacy", "2025-03-26")
    clock.now += 0.1
    assert cache.get("a") is None and len(cache) == 0  # expired: forgotten
    cache.put("b", Verdict("modern", "2026-07-28"))
    cache.forget("b")
    assert cache.get("b") is None
    cache.put("c", Verdict("sse", "2024-11-05"))
    cache.clear()
    assert len(cache) == 0


class RecordingLink(StdioLink):
    """A stdio link that records the method of every frame it sends."""

    def __init__(self, command: list[str], sent: list[str]) -> None:
        super().__init__(command)
        self.sent = sent

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        self.sent.append(json.loads(frame).get("method"))
        await super().send(frame, headers, request_id)


def test_an_injected_cache_skips_the_probe_until_its_ttl_passes() -> None:
    clock = Clock()
    cache = VerdictCache(ttl=60, clock=clock)
    key = StdioLink(FAKE).key()
    shared_verdicts().forget(key)

    async def connect() -> list[str]:
        sent: list[str] = []
        async with Client(RecordingLink(FAKE, sent), verdicts=cache) as client:
            assert (client.era, client.protocol_version) == ("legacy", "2025-03-26")
        return sent

    async def main() -> None:
        assert (await connect())[:2] == ["server/discover", "initialize"]  # probed
        assert cache.get(key) == Verdict("legacy", "2025-03-26")
        assert shared_verdicts().get(key) is None  # the injected cache, not the shared one
        clock.now += 59
        assert (await connect())[0] == "initialize"  # trusted: no probe
        clock.now += 2  # past the TTL (using a verdict does not renew it)
        assert (await connect())[:2] == ["server/discover", "initialize"]  # probed again

    asyncio.run(asyncio.wait_for(main(), 60))


def test_clients_share_one_cache_by_default() -> None:
    key = StdioLink(FAKE).key()
    shared_verdicts().forget(key)

    async def main() -> None:
        sent: list[str] = []
        async with Client(RecordingLink(FAKE, sent)):
            pass
        assert shared_verdicts().get(key) == Verdict("legacy", "2025-03-26")
        again: list[str] = []
        async with Client(RecordingLink(FAKE, again)):
            pass
        assert sent[0] == "server/discover" and again[0] == "initialize"

    asyncio.run(asyncio.wait_for(main(), 60))
