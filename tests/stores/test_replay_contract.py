"""The contract every `ReplayCache` keeps (mcpgen.stores): the first use of a key is
told apart from a replay, atomically, until the key's ttl has passed. The in-memory
cache and the Redis one (a real redis-server) pass the same tests."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import pytest

from mcpgen.stores import InMemoryReplayCache, ReplayCache, StoreUnavailableError
from mcpgen.stores.redis import Connection, RedisReplayCache
from tests.stores.redis_server import redis_url

IMPLEMENTATIONS: list[Callable[[], ReplayCache]] = [
    InMemoryReplayCache,
    lambda: RedisReplayCache(Connection(redis_url(), prefix=f"test-{uuid.uuid4().hex}:")),
]


@pytest.fixture(params=IMPLEMENTATIONS, ids=["InMemoryReplayCache", "RedisReplayCache"])
def cache(request: pytest.FixtureRequest) -> ReplayCache:
    factory: Callable[[], ReplayCache] = request.param
    return factory()


def test_the_first_use_passes_and_a_second_is_a_replay(cache: ReplayCache) -> None:
    async def body() -> list[bool]:
        return [
            await cache.first_use("jkt-1:jti-1", 60),
            await cache.first_use("jkt-1:jti-1", 60),
            await cache.first_use("jkt-1:jti-2", 60),
            await cache.first_use("jkt-2:jti-1", 60),
            await cache.first_use("jkt-1:jti-1", 60),
        ]

    assert asyncio.run(body()) == [True, False, True, True, False]


def test_of_concurrent_uses_exactly_one_is_first(cache: ReplayCache) -> None:
    async def body() -> list[bool]:
        return list(await asyncio.gather(*(cache.first_use("same", 60) for _ in range(20))))

    assert sorted(asyncio.run(body())) == [False] * 19 + [True]


def test_a_key_may_be_used_again_once_its_ttl_is_over(cache: ReplayCache) -> None:
    async def body() -> list[bool]:
        first = await cache.first_use("brief", 0.2)
        again = await cache.first_use("brief", 0.2)
        await asyncio.sleep(1.0)  # far past the ttl: no tight timing
        return [first, again, await cache.first_use("brief", 0.2)]

    assert asyncio.run(body()) == [True, False, True]


def test_odd_keys_are_stored_safely(cache: ReplayCache) -> None:
    odd = ["", "x" * 10_000, "a\x00b", "é\udcff", "key with spaces:*?[]"]

    async def body() -> list[bool]:
        return [await cache.first_use(k, 60) for k in odd] + [
            await cache.first_use(k, 60) for k in odd
        ]

    assert asyncio.run(body()) == [True] * len(odd) + [False] * len(odd)


def test_the_in_memory_cache_refuses_rather_than_forget_a_live_key() -> None:
    now = [time.monotonic()]
    cache = InMemoryReplayCache(max_entries=3, clock=lambda: now[0])

    async def body() -> None:
        for key in ("a", "b", "c"):
            assert await cache.first_use(key, 10)
        with pytest.raises(StoreUnavailableError):
            await cache.first_use("d", 10)  # full of live keys: "a" must stay known
        assert not await cache.first_use("a", 10)
        now[0] += 11  # all expired: room again, and the old keys are usable
        assert await cache.first_use("d", 10)
        assert await cache.first_use("a", 10)
        assert len(cache) <= 3

    asyncio.run(body())
    with pytest.raises(ValueError):
        InMemoryReplayCache(max_entries=0)


def test_redis_being_away_is_reported_not_taken_for_a_first_use() -> None:
    dead = Connection("redis://127.0.0.1:1/0", prefix="x:", timeout=0.5)
    with pytest.raises(StoreUnavailableError):
        asyncio.run(RedisReplayCache(dead).first_use("k", 60))
