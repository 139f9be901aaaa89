"""The `Server` constructor's options that need more than storing: checked and turned
into what the server holds (its implementation info, the core's paging and task options
in milliseconds, the Redis stores, the worker threads).

Each check raises `ConfigurationError` when the server is built, so a wrong option
stops a program at startup rather than at its first request.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from msgspec import UNSET

from mcpgen._errors import ConfigurationError
from mcpgen._server import CacheHint
from mcpgen.transports._workers import ThreadRunner
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen.auth import AuthSettings
    from mcpgen.stores.redis import RedisStores

__all__ = [
    "CoreOptions",
    "core_options",
    "implementation",
    "milliseconds",
    "redis_stores",
    "served_stores",
    "spawn",
    "worker_threads",
]


def spawn(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """How the core starts a task's work: an asyncio task on the running loop."""
    return asyncio.ensure_future(coro)


def milliseconds(seconds: float, what: str) -> int:
    """`seconds` (the option `what`, which must be positive) in whole milliseconds, at least 1."""
    if seconds <= 0:
        raise ConfigurationError(f"{what} must be positive")
    return max(1, round(seconds * 1000))


class CoreOptions(TypedDict):
    """The options a server builds its core with, as the core takes them."""

    page_size: int
    cache: dict[str, CacheHint]
    mask_errors: bool
    logging: bool
    task_ttl_ms: int | None
    task_poll_ms: int
    max_tasks_per_client: int | None


def core_options(
    page_size: int,
    cache: Mapping[str, CacheHint] | None,
    mask_errors: bool,
    logging: bool,
    task_ttl_seconds: float | None,
    task_poll_seconds: float,
    max_tasks_per_client: int | None,
) -> CoreOptions:
    """The paging, caching, error and task options, checked (in that order) and in the
    core's units (a copy of `cache`; the task durations in milliseconds)."""
    if page_size < 1:
        raise ConfigurationError("page_size must be at least 1")
    ttl = None if task_ttl_seconds is None else milliseconds(task_ttl_seconds, "task_ttl_seconds")
    poll = milliseconds(task_poll_seconds, "task_poll_seconds")
    if max_tasks_per_client is not None and max_tasks_per_client < 1:
        raise ConfigurationError("max_tasks_per_client must be at least 1 (or None)")
    return CoreOptions(
        page_size=page_size,
        cache=dict(cache or {}),
        mask_errors=mask_errors,
        logging=logging,
        task_ttl_ms=ttl,
        task_poll_ms=poll,
        max_tasks_per_client=max_tasks_per_client,
    )


def implementation(
    name: str,
    version: str,
    title: str | None,
    description: str | None,
    website_url: str | None,
    icons: list[t.Icon] | None,
) -> t.Implementation:
    """What the server says it is; an option not given is left out."""
    return t.Implementation(
        name=name,
        version=version,
        title=title if title is not None else UNSET,
        description=description if description is not None else UNSET,
        website_url=website_url if website_url is not None else UNSET,
        icons=icons if icons is not None else UNSET,
    )


def redis_stores(url: str | RedisStores | None, keyed: bool) -> RedisStores | None:
    """The Redis stores of `url` (or `MCPGEN_REDIS_URL`), None for in-memory ones."""
    url = url or os.environ.get("MCPGEN_REDIS_URL") or None
    if url is None:
        return None
    if not keyed and not os.environ.get("MCPGEN_STATE_KEYS"):
        raise ConfigurationError(
            "workers sharing Redis must share their state keys: set MCPGEN_STATE_KEYS "
            "(or pass state_keys or keys)"
        )
    from mcpgen.stores.redis import RedisStores  # noqa: PLC0415 (the redis extra)

    return url if isinstance(url, RedisStores) else RedisStores.from_url(url)


def worker_threads(sync_workers: int | None) -> ThreadRunner | None:
    """The pool that runs sync handlers; None (`sync_workers=0`): they run on the loop.
    By default as many as `concurrent.futures` would start: min(32, CPUs + 4)."""
    if sync_workers is None:
        sync_workers = min(32, (os.cpu_count() or 1) + 4)
    if sync_workers < 0:
        raise ConfigurationError("sync_workers must be 0 (off) or more")
    return ThreadRunner(sync_workers) if sync_workers else None


def served_stores(
    redis: RedisStores | None, options: dict[str, Any]
) -> tuple[Any, Any, AuthSettings | None]:
    """`asgi_app`'s session store, event store and auth settings, taken out of `options`:
    those given, else Redis's when the server has Redis (DPoP proofs then share one
    replay cache there)."""
    store, events = options.pop("store", None), options.pop("events", None)
    if redis is not None:
        # (`is None`: an empty store given is still the one to use; some have a length)
        store = redis.sessions if store is None else store
        events = redis.events if events is None else events
    auth: AuthSettings | None = options.pop("auth", None)
    if auth is not None and redis is not None:
        auth.share_replay(redis.connection)
    return store, events, auth
