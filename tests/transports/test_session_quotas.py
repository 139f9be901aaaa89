"""Legacy session quotas through the HTTP app: a flood of `initialize` from one client
(anonymous: one address; or one principal) evicts only that client's own sessions, in
memory and on a real redis-server; another client's idle session keeps working."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest

from mcpgen.stores import InMemorySessionStore, SessionStore
from mcpgen.stores.redis import Connection, RedisSessionStore
from mcpgen.transports import HttpOptions, McpAsgiApp
from tests.server.conftest import build_server
from tests.stores.redis_server import redis_url
from tests.transports import asgidriver as driver

MOST, QUOTA, FLOOD = 20, 5, 60


def _memory() -> SessionStore:
    return InMemorySessionStore(max_sessions=MOST)


def _redis() -> SessionStore:
    connection = Connection(redis_url(), prefix=f"quota-{uuid.uuid4().hex}:")
    return RedisSessionStore(connection, max_sessions=MOST)


@pytest.fixture(params=[_memory, _redis], ids=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> SessionStore:
    factory: Callable[[], SessionStore] = request.param
    return factory()


async def _status(
    app: McpAsgiApp, session: dict[str, str], principal: str | None = None, client: str = ""
) -> int:
    status, _, _ = await driver.post(app, session, driver.rpc(1, "ping"), principal, client)
    return status


def test_a_flood_of_initializes_evicts_only_the_flooders_sessions(store: SessionStore) -> None:
    options = HttpOptions(max_sessions=MOST, max_sessions_per_client=QUOTA)
    app = McpAsgiApp(build_server(), options, store=store)

    async def scenario() -> None:
        alice = await driver.initialize(app, principal="alice", client="198.51.100.4")
        neighbour = await driver.initialize(app, client="198.51.100.5")  # anonymous
        flood = [await driver.initialize(app, client="203.0.113.66") for _ in range(FLOOD)]
        # the victims, idle all along, are still there for their owners
        assert await _status(app, alice, principal="alice", client="198.51.100.4") == 200
        assert await _status(app, neighbour, client="198.51.100.5") == 200
        # the flooder keeps its newest QUOTA sessions; its older ones are gone
        statuses = [await _status(app, s, client="203.0.113.66") for s in flood]
        assert statuses == [404] * (FLOOD - QUOTA) + [200] * QUOTA
        # a principal flooding from many addresses counts as one client
        many = [
            await driver.initialize(app, principal="mallory", client=f"192.0.2.{i}")
            for i in range(FLOOD)
        ]
        assert await _status(app, alice, principal="alice", client="198.51.100.4") == 200
        assert await _status(app, many[-1], principal="mallory", client="192.0.2.1") == 200
        assert await _status(app, many[0], principal="mallory", client="192.0.2.0") == 404

    asyncio.run(scenario())


def test_a_full_store_takes_room_from_the_creator_before_anyone_else() -> None:
    """With no quota at all (None) the store's bound alone still spares other clients
    while the creating client holds sessions of its own."""
    store = InMemorySessionStore(max_sessions=MOST)
    app = McpAsgiApp(build_server(), HttpOptions(max_sessions_per_client=None), store=store)

    async def scenario() -> None:
        alice = await driver.initialize(app, client="198.51.100.4")
        for _ in range(FLOOD):
            await driver.initialize(app, client="203.0.113.66")
        assert len(store) == MOST
        assert await _status(app, alice, client="198.51.100.4") == 200

    asyncio.run(scenario())


def test_ipv6_clients_count_by_their_64_network() -> None:
    from mcpgen.stores._quota import client_key

    assert client_key(None, "2001:db8:1:2::1") == client_key(None, "2001:db8:1:2:ffff::9")
    assert client_key(None, "2001:db8:1:2::1") != client_key(None, "2001:db8:1:3::1")
    assert client_key(None, "::ffff:192.0.2.1") == client_key(None, "192.0.2.1") == "a:192.0.2.1"
    assert client_key("192.0.2.1", None) != client_key(None, "192.0.2.1")  # principal != address
    assert client_key(None, None) is None


def test_the_live_half_evicts_the_creators_own_sessions_first() -> None:
    """The live copies (whose eviction cancels a session's work in this process) follow
    the same rule as the store."""
    from mcpgen.transports._live import LiveSessions

    server = build_server()
    live = LiveSessions(max_sessions=5)
    victim = live.add(server.session(), "alice", client="p:alice")
    for _ in range(30):
        live.add(server.session(), None, client="a:203.0.113.66")
    assert live.peek(victim.id) is victim
    assert live.held_by("a:203.0.113.66") == 4 and len(live) == 5
    newcomer = live.add(server.session(), "bob", client="p:bob")  # holds none: LRU goes
    assert live.peek(victim.id) is None and live.peek(newcomer.id) is newcomer
    live.remove(newcomer.id)
    assert live.held_by("p:bob") == 0


def test_the_old_sse_transport_bounds_the_open_streams_of_a_client() -> None:
    app = McpAsgiApp(build_server(), HttpOptions(max_sessions_per_client=3))

    def stream(client: str) -> driver.Exchange:
        exchange = driver.Exchange(app, "GET", {"accept": "text/event-stream"}, client=client)
        exchange.scope["path"] = "/sse"  # (the task has not run yet)
        return exchange

    async def scenario() -> None:
        mine = [stream("203.0.113.66") for _ in range(3)]
        for exchange in mine:
            assert (await exchange.start())[0] == 200
        refused = stream("203.0.113.66")
        status, _ = await refused.start()
        assert status == 429
        assert b"too many open sessions for this client" in await refused.body()
        other = stream("198.51.100.4")
        assert (await other.start())[0] == 200
        await mine[0].disconnect()  # a stream that ends frees its place
        again = stream("203.0.113.66")
        assert (await again.start())[0] == 200
        for exchange in (*mine[1:], other, again):
            await exchange.disconnect()

    asyncio.run(scenario())


def test_an_address_key_is_worked_out_once() -> None:
    """The key of an address repeats on every session a client opens: parsed once."""
    from mcpgen.stores._quota import _address_key, client_key

    _address_key.cache_clear()
    keys = [client_key(None, "2001:db8::7") for _ in range(3)]
    assert keys == ["a:2001:db8::/64"] * 3
    assert _address_key.cache_info().hits == 2
    assert client_key("alice", "2001:db8::7") == "p:alice"
