"""The Redis URL forms the stores accept (`_connect.client_for`): which client each
makes, what it is told, and the errors for malformed ones (never with the password)."""

from __future__ import annotations

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.sentinel import SentinelConnectionPool

from mcpgen.stores.redis import Connection
from mcpgen.stores.redis._connect import client_for


def test_a_sentinel_url_names_the_sentinels_the_service_and_the_db() -> None:
    url = "redis+sentinel://app:s3cret@127.0.0.1:1,[::1]:2/primary-1/3?sentinel_password=x"
    client = client_for(url, socket_connect_timeout=0.5)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "primary-1"
    sentinels = pool.sentinel_manager.sentinels
    hosts = [
        (s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"])
        for s in sentinels
    ]
    assert hosts == [("127.0.0.1", 1), ("::1", 2)]
    assert sentinels[0].connection_pool.connection_kwargs["password"] == "x"
    kwargs = pool.connection_kwargs
    assert (kwargs["db"], kwargs["username"], kwargs["password"]) == (3, "app", "s3cret")


def test_a_cluster_url_seeds_a_cluster_client_and_gives_each_group_a_hash_tag() -> None:
    client = client_for("redis+cluster://127.0.0.1:7000,127.0.0.1:7001")
    assert isinstance(client, RedisCluster)
    cluster = Connection("redis+cluster://127.0.0.1:7000")
    assert cluster.prefix == "mcpgen:" and cluster.spread
    assert cluster.under("t:abc") == "mcpgen:{t:abc}"
    # a prefix with braces of its own pins every key to its slot, as before groups
    pinned = Connection("redis+cluster://127.0.0.1:7000", prefix="{a}:")
    assert pinned.under("t:abc") == "{a}:" and not pinned.spread
    for url in ("redis://127.0.0.1:7000", "redis+sentinel://127.0.0.1:7000/m"):
        other = Connection(url)  # key names as they were: no tags
        assert other.prefix == other.under("t:abc") == "mcpgen:" and not other.spread


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+sentinel://u:hunter2@127.0.0.1:1", "/service_name"),
        ("redis+sentinel://u:hunter2@127.0.0.1:1/a/b", "/service_name"),
        ("redis+sentinel://u:hunter2@127.0.0.1/a", "host:port"),
        ("redis+cluster://u:hunter2@127.0.0.1:1?bogus=1", "unknown option(s) bogus"),
    ],
)
def test_malformed_urls_are_refused_without_the_password(url: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        client_for(url)
    assert says in str(caught.value)
    assert "hunter2" not in str(caught.value) and "u:***@" in str(caught.value)
