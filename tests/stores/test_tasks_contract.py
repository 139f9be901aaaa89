"""The contract every `TaskStore` keeps (mcpgen.stores).

`IMPLEMENTATIONS` lists factories; a shared store (e.g. Redis) appends its own and
passes the same tests. A factory gets the test's clock (a callable giving seconds
since the epoch) and must measure ttl expiry with it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import msgspec
import pytest

from mcpgen.stores import InMemoryTaskStore, TaskState, TaskStore
from mcpgen.stores.redis import Connection, RedisTaskStore
from tests.stores.redis_server import redis_url

T = TypeVar("T")
START = 1_700_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


IMPLEMENTATIONS: list[object] = [
    lambda clock: InMemoryTaskStore(clock=clock),
    pytest.param(
        lambda clock: RedisTaskStore(_redis(), clock=clock), marks=pytest.mark.needs_redis
    ),
]
NAMES = ["InMemoryTaskStore", "RedisTaskStore"]


def _redis() -> Connection:
    """A connection to the test redis-server under a prefix of its own (isolation)."""
    return Connection(redis_url(), prefix=f"test-{uuid.uuid4().hex}:")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=IMPLEMENTATIONS, ids=NAMES)
def store(request: pytest.FixtureRequest, clock: Clock) -> TaskStore:
    factory: Callable[[Clock], TaskStore] = request.param
    return factory(clock)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def state(task_id: str = "t1", *, ttl_ms: int | None = 60_000, **changes: Any) -> TaskState:
    ms = int(START * 1000)
    base = TaskState(
        id=task_id,
        principal="alice",
        status="working",
        created_ms=ms,
        updated_ms=ms,
        ttl_ms=ttl_ms,
        poll_ms=500,
        owner="worker-1",
    )
    return msgspec.structs.replace(base, **changes)


FULL = state(
    "full",
    status="input_required",
    status_message="waiting for you",
    input_requests={
        "confirm": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "ok?", "requestedSchema": {"type": "object"}},
        }
    },
    result=None,
    error=None,
)


def test_unknown_ids_are_none(store: TaskStore) -> None:
    assert run(store.get("nope")) is None


def test_put_then_get_round_trips_every_field(store: TaskStore) -> None:
    finished = state(
        "done",
        status="completed",
        result={"content": [{"type": "text", "text": "hi"}], "isError": False, "n": 1.5},
    )
    failed = state("bad", status="failed", error={"code": -32602, "message": "no", "data": [1]})

    async def body() -> None:
        for record in (FULL, finished, failed, state("anon", principal=None)):
            await store.put(record)
            got = await store.get(record.id)
            assert got == record
            assert got is not record

    run(body())


def test_a_get_is_a_copy_the_caller_may_change(store: TaskStore) -> None:
    async def body() -> None:
        await store.put(FULL)
        got = await store.get(FULL.id)
        assert got is not None
        got.status = "cancelled"
        got.input_requests["other"] = {}
        assert await store.get(FULL.id) == FULL

    run(body())


def test_put_replaces_a_record(store: TaskStore) -> None:
    async def body() -> None:
        await store.put(FULL)
        done = msgspec.structs.replace(
            FULL, status="completed", input_requests={}, result={"content": []}, updated_ms=9
        )
        await store.put(done)
        assert await store.get(FULL.id) == done

    run(body())


@pytest.mark.parametrize("final", ["completed", "failed", "cancelled"])
def test_a_record_with_a_final_status_is_never_written_over(store: TaskStore, final: str) -> None:
    """Another worker's late write (its handler finished, it asked for input, it made
    progress) over a task that has ended changes nothing and gets the record back."""
    ended = state("t", status=final, status_message="ended", updated_ms=5)

    async def body() -> None:
        assert await store.put(state("t")) is None  # written
        assert await store.put(ended) is None
        late = [
            state("t", status="completed", result={"content": []}, updated_ms=9),
            state("t", status="failed", error={"code": -1, "message": "late"}, updated_ms=9),
            state("t", status="cancelled", status_message="again", updated_ms=9),
            state("t", status="working", status_message="50%", updated_ms=9),
            msgspec.structs.replace(FULL, id="t", updated_ms=9),  # input_required
        ]
        for record in late:
            assert await store.put(record) == ended  # refused: the stored record
            assert await store.get("t") == ended
        await store.delete("t")  # a deleted task's id is free again
        assert await store.put(state("t")) is None
        assert await store.get("t") == state("t")
        await _closed(store)

    run(body())


def test_an_expired_final_record_does_not_block_a_put(store: TaskStore, clock: Clock) -> None:
    async def body() -> None:
        await store.put(state("t", ttl_ms=1_000, status="cancelled"))
        clock.now = START + 2.0
        fresh = state("t", ttl_ms=1_000, created_ms=int(clock.now * 1000))
        assert await store.put(fresh) is None
        assert await store.get("t") == fresh
        await _closed(store)

    run(body())


def test_delete_forgets_and_tolerates_unknown_ids(store: TaskStore) -> None:
    async def body() -> None:
        await store.put(state("a"))
        await store.put(state("b"))
        await store.delete("a")
        await store.delete("never-there")
        assert await store.get("a") is None
        assert await store.get("b") == state("b")

    run(body())


def test_records_expire_ttl_after_creation_by_the_clock(store: TaskStore, clock: Clock) -> None:
    async def body() -> None:
        await store.put(state("short", ttl_ms=1_000))
        await store.put(state("forever", ttl_ms=None))
        clock.now = START + 0.999
        assert await store.get("short") == state("short", ttl_ms=1_000)
        clock.now = START + 1.0
        assert await store.get("short") is None
        clock.now = START + 10 * 365 * 86_400
        assert await store.get("forever") == state("forever", ttl_ms=None)

    run(body())


def test_expiry_counts_from_creation_not_from_the_last_put(store: TaskStore, clock: Clock) -> None:
    async def body() -> None:
        await store.put(state("t", ttl_ms=1_000))
        clock.now = START + 0.9
        await store.put(state("t", ttl_ms=1_000, status="completed", result={"content": []}))
        clock.now = START + 1.1
        assert await store.get("t") is None

    run(body())


def test_the_principal_is_kept_per_record(store: TaskStore) -> None:
    """The store keeps the principal; the runner compares it (a store answers by id)."""

    async def body() -> None:
        await store.put(state("mine", principal="alice"))
        await store.put(state("theirs", principal="bob"))
        mine, theirs = await store.get("mine"), await store.get("theirs")
        assert mine is not None and mine.principal == "alice"
        assert theirs is not None and theirs.principal == "bob"

    run(body())


def test_a_state_survives_msgspec_encoding() -> None:
    """What a shared store does with a record: encode it, later decode it."""
    for codec in (msgspec.json, msgspec.msgpack):
        assert codec.decode(codec.encode(FULL), type=TaskState) == FULL
    stored = run(_stored_then_encoded(FULL))
    assert msgspec.json.decode(stored, type=TaskState) == FULL


async def _stored_then_encoded(record: TaskState) -> bytes:
    store = InMemoryTaskStore(clock=Clock())
    await store.put(record)
    got = await store.get(record.id)
    return msgspec.json.encode(got)


def test_a_state_that_cannot_be_encoded_is_refused_at_put() -> None:
    bad = state("bad", result={"content": object()})
    with pytest.raises(TypeError):
        run(InMemoryTaskStore().put(bad))


# -- running tasks per client ---------------------------------------------------------------------
async def _closed(store: TaskStore) -> None:
    close = getattr(store, "aclose", None)
    if close is not None:
        await close()


def test_create_bounds_the_running_tasks_of_each_client(store: TaskStore) -> None:
    async def body() -> None:
        assert await store.create(state("a1"), client="p:a", most=2)
        assert await store.create(state("a2", status="input_required"), client="p:a", most=2)
        assert not await store.create(state("a3"), client="p:a", most=2)
        assert await store.get("a3") is None  # refused: nothing stored
        assert await store.create(state("b1"), client="p:b", most=2)  # another client
        assert await store.create(state("n1"), most=2)  # the unknown clients, together
        for i in range(3):  # no bound
            assert await store.create(state(f"c{i}"), client="p:c", most=None)
        await store.put(state("a1", status="completed"))  # an ended task stops counting
        assert await store.create(state("a3"), client="p:a", most=2)
        assert not await store.create(state("a4"), client="p:a", most=2)
        await store.delete("a2")  # and so does a deleted one
        assert await store.create(state("a4"), client="p:a", most=2)
        got = await store.get("a4")
        assert got is not None and got.status == "working"
        await _closed(store)

    run(body())


def test_a_task_created_as_ended_does_not_count(store: TaskStore) -> None:
    async def body() -> None:
        for i in range(3):
            assert await store.create(state(f"c{i}", status="completed"), client="p:a", most=1)
        assert await store.create(state("w"), client="p:a", most=1)
        await _closed(store)

    run(body())


# -- the in-memory store's own limits ------------------------------------------------------------
def test_the_in_memory_store_is_bounded_expired_first_then_oldest(clock: Clock) -> None:
    store = InMemoryTaskStore(clock=clock, max_tasks=3)

    async def body() -> None:
        await store.put(state("old", ttl_ms=None))
        await store.put(state("brief", ttl_ms=500))
        await store.put(state("mid", ttl_ms=None))
        clock.now = START + 1
        await store.put(state("new", ttl_ms=None))  # makes room: "brief" expired
        assert [await store.get(i) is not None for i in ("old", "mid", "new")] == [True] * 3
        await store.put(state("newer", ttl_ms=None))  # nothing expired: the oldest goes
        assert await store.get("old") is None
        assert len(store) == 3
        await store.put(state("mid", ttl_ms=None, status="completed"))  # a replace: no eviction
        assert len(store) == 3 and await store.get("new") is not None

    run(body())
    with pytest.raises(ValueError):
        InMemoryTaskStore(max_tasks=0)


def test_a_full_in_memory_store_drops_the_creating_clients_records_first(clock: Clock) -> None:
    store = InMemoryTaskStore(clock=clock, max_tasks=5)

    async def body() -> None:
        assert await store.create(state("victim", ttl_ms=None), client="p:v", most=100)
        for i in range(20):
            done = state(f"x{i}", ttl_ms=None, status="completed")
            assert await store.create(done, client="a:1.2.3.4", most=100)
        assert await store.get("victim") is not None
        assert await store.get("x19") is not None and await store.get("x0") is None

    run(body())
