"""The one place a redis-py client is made from a URL: a single Redis, a Sentinel-managed
primary or a Redis Cluster.

- `redis://`, `rediss://`, `unix://`: one server (redis-py's own URL parsing).
- `redis+sentinel://[user:password@]host:port,host:port/service[/db][?options]`
  (`rediss+sentinel://` for TLS): the primary that the sentinels name for `service`,
  asked again on every new connection, so a client follows a failover. The user and
  password are those of the data nodes; `sentinel_password` and `sentinel_username`
  in the query are the sentinels' own (none by default).
- `redis+cluster://[user:password@]host:port,host:port[?options]`
  (`rediss+cluster://` for TLS): a Redis Cluster, found from any of the seed nodes.

Other query options: `ssl_ca_certs` (a CA file, for the TLS forms). An unknown option
or a malformed URL raises `ValueError` naming it (without the password).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import ExponentialBackoff

__all__ = ["CLUSTER", "SENTINEL", "client_for", "kind", "node_client", "redacted"]

SENTINEL = "sentinel"
CLUSTER = "cluster"
_OPTIONS = frozenset({"sentinel_password", "sentinel_username", "ssl_ca_certs"})


def kind(url: str) -> str:
    """`sentinel`, `cluster` or `single`: the layout a URL names."""
    scheme = url.partition("://")[0].lower()
    if scheme in ("redis+sentinel", "rediss+sentinel"):
        return SENTINEL
    if scheme in ("redis+cluster", "rediss+cluster"):
        return CLUSTER
    return "single"


def _hosts(netloc: str, url: str) -> list[tuple[str, int]]:
    out = []
    for item in netloc.rpartition("@")[2].split(","):
        host, sep, port = item.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"{_shown(url)}: expected host:port[,host:port...], got {item!r}")
        out.append((host.strip("[]"), int(port)))
    return out


def redacted(url: str) -> str:
    """`url` without its password, for error messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.partition(":")[0]
    return f"{scheme}://{user + ':***@' if user else '***@'}{host}"


_shown = redacted


def _options(url: str) -> tuple[Any, dict[str, str], dict[str, Any], dict[str, Any]]:
    """The parts of a Sentinel or Cluster URL, its query, credentials and TLS options."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = sorted(set(query) - _OPTIONS)
    if unknown:
        raise ValueError(f"{_shown(url)}: unknown option(s) {', '.join(unknown)}")
    creds = parts.netloc.rpartition("@")[0]
    user, _, password = creds.partition(":")
    auth: dict[str, Any] = {}
    if user:
        auth["username"] = unquote(user)
    if password:
        auth["password"] = unquote(password)
    tls: dict[str, Any] = {}
    if parts.scheme.lower().startswith("rediss+"):
        tls["ssl"] = True
        if "ssl_ca_certs" in query:
            tls["ssl_ca_certs"] = query["ssl_ca_certs"]
    return parts, query, auth, tls


def node_client(url: str, host: str, port: int, **kwargs: Any) -> aioredis.Redis:
    """A client of one node of the Cluster `url` (its credentials and TLS options):
    for a subscription that must stay on the node serving a slot."""
    _, _, auth, tls = _options(url)
    return aioredis.Redis(host=host, port=port, **auth, **tls, **kwargs)


def client_for(url: str, **kwargs: Any) -> aioredis.Redis:
    """A client for `url` (any of the forms above); `kwargs` are redis-py connection
    options (timeouts, health checks), applied to the data nodes."""
    layout = kind(url)
    if layout == "single":
        return aioredis.Redis.from_url(url, **kwargs)
    parts, query, auth, tls = _options(url)
    hosts = _hosts(parts.netloc, url)
    if layout == CLUSTER:
        nodes = [ClusterNode(host, port) for host, port in hosts]
        kwargs.pop("retry_on_timeout", None)
        # A few quick retries (a moved slot, a node just gone): a request then fails
        # within about a second while a failover is under way, rather than waiting
        # through redis-py's default backoff of several seconds.
        retry = Retry(ExponentialBackoff(cap=0.25, base=0.05), 2)
        cluster: Any = RedisCluster(startup_nodes=nodes, retry=retry, **auth, **tls, **kwargs)
        same: aioredis.Redis = cluster  # (it answers every command the stores send)
        return same
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2 or (len(path) == 2 and not path[1].isdigit()):
        raise ValueError(f"{_shown(url)}: expected /service_name[/db] after the sentinels")
    sentinel_kwargs: dict[str, Any] = {
        k: v for k, v in kwargs.items() if k.startswith("socket_connect")
    }
    sentinel_kwargs.setdefault("socket_timeout", kwargs.get("socket_connect_timeout", 2.0))
    if "sentinel_password" in query:
        sentinel_kwargs["password"] = query["sentinel_password"]
    if "sentinel_username" in query:
        sentinel_kwargs["username"] = query["sentinel_username"]
    sentinel_kwargs.update(tls)
    sentinel = Sentinel(hosts, sentinel_kwargs=sentinel_kwargs)
    db = int(path[1]) if len(path) == 2 else 0
    client: aioredis.Redis = sentinel.master_for(
        unquote(path[0]), db=db, check_connection=True, **auth, **tls, **kwargs
    )
    return client
