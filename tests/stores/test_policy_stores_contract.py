"""The contract of the policies' stores (`RateLimitStore`, `ResponseStore`), kept by the
in-memory implementations and the Redis ones alike; and that several workers sharing
Redis enforce one limit between them."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mcpgen.stores import (
    Bucket,
    InMemoryRateLimitStore,
    InMemoryResponseStore,
    RateLimitStore,
    ResponseStore,
)
from mcpgen.stores.redis import Connection, RedisRateLimitStore, RedisResponseStore
from tests.stores.redis_server import redis_url


def _redis(prefix: str | None = None) -> Connection:
    return Connection(redis_url(), prefix=prefix or f"test-{uuid.uuid4().hex}:")


LIMITERS: dict[str, Callable[[], RateLimitStore]] = {
    "InMemoryRateLimitStore": InMemoryRateLimitStore,
    "RedisRateLimitStore": lambda: RedisRateLimitStore(_redis()),
}
RESPONSES: dict[str, Callable[[], ResponseStore]] = {
    "InMemoryResponseStore": InMemoryResponseStore,
    "RedisResponseStore": lambda: RedisResponseStore(_redis()),
}


@pytest.fixture(params=list(LIMITERS))
def limiter(request: pytest.FixtureRequest) -> RateLimitStore:
    return LIMITERS[request.param]()


@pytest.fixture(params=list(RESPONSES))
def responses(request: pytest.FixtureRequest) -> ResponseStore:
    return RESPONSES[request.param]()


def test_a_bucket_admits_its_burst_then_names_the_wait(limiter: RateLimitStore) -> None:
    slow = Bucket("slow", rate=0.5, burst=3)

    async def main() -> list[float]:
        return [await limiter.take([slow]) for _ in range(4)]

    taken = asyncio.run(main())
    assert taken[:3] == [0.0, 0.0, 0.0]
    assert 1.5 < taken[3] <= 2.0  # one token at 0.5 a second


def test_several_buckets_are_taken_all_or_none(limiter: RateLimitStore) -> None:
    roomy, tight = Bucket("roomy", rate=0.001, burst=2), Bucket("tight", rate=0.001, burst=1)

    async def main() -> tuple[float, float, float, float]:
        first = await limiter.take([roomy, tight])
        refused = await limiter.take([roomy, tight])  # tight is empty: roomy keeps its token
        alone = await limiter.take([roomy])
        empty = await limiter.take([roomy])
        return first, refused, alone, empty

    first, refused, alone, empty = asyncio.run(main())
    assert first == 0.0 and refused > 100 and alone == 0.0 and empty > 100


def test_a_bucket_refills_at_its_rate(limiter: RateLimitStore) -> None:
    fast = Bucket("fast", rate=50.0, burst=1)

    async def main() -> tuple[float, float]:
        assert await limiter.take([fast]) == 0.0
        assert await limiter.take([fast]) > 0.0
        await asyncio.sleep(0.2)  # ten tokens' worth; the bucket holds one
        return await limiter.take([fast]), await limiter.take([fast])

    again, then = asyncio.run(main())
    assert again == 0.0 and then > 0.0


def test_workers_sharing_redis_enforce_one_limit_together() -> None:
    prefix = f"cluster-{uuid.uuid4().hex}:"
    workers = [RedisRateLimitStore(_redis(prefix)) for _ in range(3)]
    bucket = Bucket("shared", rate=0.001, burst=5)

    async def main() -> list[float]:
        takes = [workers[i % 3].take([bucket]) for i in range(30)]
        return list(await asyncio.gather(*takes))

    results = asyncio.run(main())
    assert sum(1 for r in results if r == 0.0) == 5


def test_the_memory_limiter_forgets_the_least_recent_bucket_first() -> None:
    now = [1000.0]
    store = InMemoryRateLimitStore(clock=lambda: now[0], max_buckets=2)

    async def main() -> list[float]:
        one = Bucket("one", rate=0.001, burst=1)
        out = [await store.take([one])]
        await store.take([Bucket("two", rate=0.001, burst=1)])
        await store.take([Bucket("three", rate=0.001, burst=1)])
        out.append(await store.take([one]))  # forgotten: a full bucket again
        return out

    assert asyncio.run(main()) == [0.0, 0.0]


def test_responses_are_kept_expire_and_are_invalidated_by_group(responses: ResponseStore) -> None:
    async def main() -> list[Any]:
        await responses.put("tools", "a", b"A", 60_000)
        await responses.put("tools", "b", b"B", 60_000)
        await responses.put("prompts", "a", b"P", 60_000)
        await responses.put("short", "a", b"S", 50)
        seen: list[Any] = [await responses.get("tools", "a"), await responses.get("prompts", "a")]
        await responses.invalidate("tools")
        seen += [await responses.get("tools", "a"), await responses.get("tools", "b")]
        seen.append(await responses.get("prompts", "a"))  # another group: kept
        await responses.put("tools", "a", b"A2", 60_000)  # after the invalidation: kept
        seen.append(await responses.get("tools", "a"))
        await asyncio.sleep(0.2)
        seen.append(await responses.get("short", "a"))
        return seen

    assert asyncio.run(main()) == [b"A", b"P", None, None, b"P", b"A2", None]


def test_the_memory_response_store_is_bounded() -> None:
    store = InMemoryResponseStore(clock=time.monotonic, max_entries=2)

    async def main() -> list[bytes | None]:
        for key in "abc":
            await store.put("g", key, key.encode(), 60_000)
        return [await store.get("g", key) for key in "abc"]

    assert asyncio.run(main()) == [None, b"b", b"c"]


def test_the_memory_response_store_forgets_the_groups_it_let_go() -> None:
    """A group per resource read: once its entries are pushed out or expire, the group
    goes too (a client reading ever new URIs of a template grows nothing)."""
    now = [0.0]
    store = InMemoryResponseStore(clock=lambda: now[0], max_entries=3)

    async def main() -> None:
        for i in range(1000):
            await store.put(f"resource:users://{i}", "k", b"v", 60_000)
        now[0] = 120.0
        for i in range(997, 1000):
            assert await store.get(f"resource:users://{i}", "k") is None  # expired

    asyncio.run(main())
    assert store._groups == {} and len(store._entries) == 0
