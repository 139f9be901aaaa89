"""What the Redis stores do beyond the shared contracts: one prefix for every key,
no pickle, a bus that sync handlers may publish to from their worker threads."""

from __future__ import annotations

import asyncio
import socket
import threading
import uuid

import pytest

from mcpgen import Server
from mcpgen.stores import (
    ChangeEvent,
    InMemoryEventStore,
    InMemorySessionStore,
    SessionState,
    TaskEvent,
)
from mcpgen.stores.redis import RedisStores, redacted
from tests.stores.redis_server import redis_url
from tests.stores.redis_server import server as redis_server

pytestmark = pytest.mark.needs_redis


def _keys() -> list[str]:
    with socket.create_connection(("127.0.0.1", redis_server().port)) as sock:
        sock.sendall(b"KEYS *\r\n")
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 1 + 2 * int(
            data.split(b"\r\n", 1)[0][1:] or 0
        ):
            data += sock.recv(65536)
    return [line.decode() for line in data.split(b"\r\n")[2::2] if line]


def test_every_key_is_under_the_prefix_and_nothing_is_pickled() -> None:
    prefix = f"only-{uuid.uuid4().hex}:"
    stores = RedisStores.from_url(redis_url(), prefix=prefix)
    sid = f"s{uuid.uuid4().hex}"  # unique, so no other test's key can contain it

    async def main() -> None:
        await stores.sessions.create(SessionState(id=sid, version="2025-11-25"))
        await stores.events.append(f"{sid}/x", b"frame")
        got: list[object] = []
        stores.bus.subscribe(got.append)
        await stores.bus.ready()
        stores.bus.publish(TaskEvent("t", None, {}))
        while not got:
            await asyncio.sleep(0.01)
        value = await stores.connection.client.hget(prefix + "session:" + sid, "d")
        assert isinstance(value, bytes) and not value.startswith(b"\x80")  # no pickle
        await stores.bus.aclose()

    asyncio.run(main())
    mine = [k for k in _keys() if k.startswith(prefix)]
    assert mine  # the stores wrote keys, all of them under the prefix
    assert not [k for k in _keys() if sid in k and not k.startswith(prefix)]


def test_a_publish_from_another_thread_is_sent_without_waiting_for_the_loop() -> None:
    stores = RedisStores.from_url(redis_url(), prefix=f"thread-{uuid.uuid4().hex}:")

    async def main() -> None:
        arrived = asyncio.Event()
        stores.bus.subscribe(lambda event: arrived.set() if event == ChangeEvent("x") else None)
        await stores.bus.ready()
        stores.bus.publish(ChangeEvent("warm-up"))
        await asyncio.sleep(0.1)
        thread = threading.Thread(target=stores.bus.publish, args=(ChangeEvent("x"),))
        thread.start()
        thread.join()
        await asyncio.wait_for(arrived.wait(), 2)  # the loop sleeps: only a wake-up helps
        await stores.bus.aclose()

    asyncio.run(main())


def test_passwords_stay_out_of_messages() -> None:
    assert redacted("redis://user:pw@host:6379/0") == "redis://user:***@host:6379/0"
    assert redacted("redis://:pw@host/0") == "redis://***@host/0"
    assert redacted("redis://host:6379") == "redis://host:6379"


def test_session_quota_bookkeeping_goes_with_the_sessions() -> None:
    """The client of each session (hash) and each client's ids (set) leave Redis with
    the sessions, however they go: deleted, evicted by the quota, idled out."""
    from mcpgen.stores.redis import Connection, RedisSessionStore

    prefix = f"quota-{uuid.uuid4().hex}:"
    now = [1000.0]
    store = RedisSessionStore(
        Connection(redis_url(), prefix=prefix), idle_timeout=10.0, clock=lambda: now[0]
    )

    index = store.connection.under("s")

    async def main() -> None:
        client = store.connection.client
        for i in range(4):  # quota 2: two of them are evicted
            now[0] += 1
            fresh = SessionState(id=f"x{i}", version="2025-11-25")
            await store.create(fresh, client="a:x", quota=2)
        assert await client.smembers(index + "s-quota:a:x") == {b"x2", b"x3"}
        assert await client.hkeys(index + "s-owner") == [b"x2", b"x3"]
        assert await store.delete("x2")
        now[0] += 11  # x3 idles out: the next create sweeps it
        await store.create(SessionState(id="other", version="2025-11-25"), client="p:o", quota=2)
        assert await client.exists(index + "s-quota:a:x") == 0
        assert await client.hkeys(index + "s-owner") == [b"other"]
        assert await store.load("other") is not None
        await client.aclose()

    asyncio.run(main())


def test_an_empty_store_given_to_the_app_is_used_rather_than_redis() -> None:
    """`asgi_app(store=..., events=...)` on a server with Redis: the stores given win,
    even when they are empty (an empty `InMemoryEventStore` has a length of 0)."""
    server = Server("given", state_keys=["k" * 32], redis=redis_url())
    events, sessions = InMemoryEventStore(), InMemorySessionStore()
    assert len(events) == 0
    app = server.asgi_app(events=events, store=sessions)
    assert app.events is events and app.store is sessions


HOSTILE_IDS = ["{s:x}", "x}", "}{", "t:x", "s", "x\nDEL *", "*", "x:" * 2000, "é{ü}", ""]


@pytest.mark.parametrize("hostile", HOSTILE_IDS, ids=range(len(HOSTILE_IDS)))
def test_a_made_up_id_names_nothing_and_makes_no_key(hostile: str) -> None:
    """A session or task id a client makes up (braces that would be a hash tag, the
    groups' own separators, a newline, glob characters, very long) finds nothing, and
    looking it up leaves no key behind: an id cannot reach another entity's keys."""
    from mcpgen.stores.redis import Connection, RedisSessionStore, RedisTaskStore

    connection = Connection(redis_url(), prefix=f"ids-{uuid.uuid4().hex}:")
    sessions = RedisSessionStore(connection, idle_timeout=60.0, stale_after=0)
    tasks = RedisTaskStore(connection)

    async def main() -> list[bytes]:
        await sessions.create(SessionState(id="x", version="2025-11-25"), client="c")
        before = sorted(await connection.client.keys(connection.prefix + "*"))
        assert await sessions.load(hostile) is None
        assert await tasks.get(hostile) is None
        await sessions.delete(hostile)
        assert await sessions.load("x") is not None  # the real one untouched
        after = sorted(await connection.client.keys(connection.prefix + "*"))
        await connection.aclose()
        return [*before, b"|", *after]

    found = asyncio.run(main())
    split = found.index(b"|")
    assert found[:split] == found[split + 1 :]
