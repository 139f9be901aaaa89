"""The workload's three tools on two I/O stacks, shared by every server under test.

- ``httpx``: what a user writes first: one ``httpx.AsyncClient`` and one
  ``redis.asyncio.Redis`` (the pure-Python RESP parser), the stdlib ``json``, Redis
  commands sent one by one under ``asyncio.gather``;
- ``fast``: one ``aiohttp.ClientSession`` (a keep-alive pool), ``redis.asyncio`` with
  the hiredis parser, the Redis commands of one tool that do not wait for each other
  pipelined in one round trip, msgspec for JSON.

Each stack's clients are opened once per process (the server's lifespan) and shared by
every call. A tool returns its answer as JSON text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

STACKS = ("httpx", "fast")


class Stack(Protocol):
    async def search_products(
        self, category: str, min_price: float, max_price: float, limit: int
    ) -> str: ...

    async def get_user_cart(self, user_id: int) -> str: ...

    async def checkout(self, user_id: int, items: list[dict[str, int]]) -> str: ...


class HttpxStack:
    def __init__(self, http: Any, redis: Any) -> None:
        self.http = http
        self.redis = redis

    async def search_products(
        self, category: str, min_price: float, max_price: float, limit: int
    ) -> str:
        params = {"category": category, "min_price": min_price, "max_price": max_price}
        found, popular = await asyncio.gather(
            self.http.get("/products/search", params={**params, "limit": limit}),
            self.redis.zrevrange("popularity", 0, 9, withscores=True),
        )
        found.raise_for_status()
        body = found.json()
        top = [{"product_id": int(k), "score": s} for k, s in popular]
        return json.dumps({"total": body["total"], "products": body["products"], "popular": top})

    async def get_user_cart(self, user_id: int) -> str:
        cart = await self.redis.hgetall(f"cart:{user_id}")
        first = min(cart, default=b"1").decode()
        product, recent = await asyncio.gather(
            self.http.get(f"/products/{first}"), self.redis.lrange(f"recent:{user_id}", 0, 4)
        )
        product.raise_for_status()
        items = {k.decode(): int(v) for k, v in cart.items()}
        return json.dumps(
            {"items": items, "product": product.json(), "recent": [int(r) for r in recent]}
        )

    async def checkout(self, user_id: int, items: list[dict[str, int]]) -> str:
        first = str(items[0]["product_id"]) if items else "1"
        priced, order, _, _ = await asyncio.gather(
            self.http.post("/cart/calculate", json={"items": items}),
            self.redis.incr("orders"),
            self.redis.lpush(f"recent:{user_id}", first),
            self.redis.zincrby("popularity", 1, first),
        )
        priced.raise_for_status()
        return json.dumps({"order_id": order, "total": priced.json()["total"]})


class FastStack:
    def __init__(self, http: Any, base: str, redis: Any) -> None:
        import msgspec  # noqa: PLC0415

        self.http = http
        self.base = base
        self.redis = redis
        self.encode = msgspec.json.encode
        self.decode = msgspec.json.decode

    async def _get(self, path: str, params: dict[str, str] | None = None) -> Any:
        async with self.http.get(self.base + path, params=params) as response:
            response.raise_for_status()
            return self.decode(await response.read())

    async def search_products(
        self, category: str, min_price: float, max_price: float, limit: int
    ) -> str:
        params = {
            "category": category,
            "min_price": str(min_price),
            "max_price": str(max_price),
            "limit": str(limit),
        }
        body, popular = await asyncio.gather(
            self._get("/products/search", params),
            self.redis.zrevrange("popularity", 0, 9, withscores=True),
        )
        top = [{"product_id": int(k), "score": s} for k, s in popular]
        answer = {"total": body["total"], "products": body["products"], "popular": top}
        return self.encode(answer).decode()

    async def get_user_cart(self, user_id: int) -> str:
        # Both reads in one round trip: the recent items do not depend on the cart.
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(f"cart:{user_id}").lrange(f"recent:{user_id}", 0, 4)
        cart, recent = await pipe.execute()
        first = min(cart, default=b"1").decode()
        product = await self._get(f"/products/{first}")
        items = {k.decode(): int(v) for k, v in cart.items()}
        answer = {"items": items, "product": product, "recent": [int(r) for r in recent]}
        return self.encode(answer).decode()

    async def _priced(self, items: list[dict[str, int]]) -> Any:
        data = self.encode({"items": items})
        headers = {"content-type": "application/json"}
        async with self.http.post(self.base + "/cart/calculate", data=data, headers=headers) as r:
            r.raise_for_status()
            return self.decode(await r.read())

    async def checkout(self, user_id: int, items: list[dict[str, int]]) -> str:
        first = str(items[0]["product_id"]) if items else "1"
        pipe = self.redis.pipeline(transaction=False)
        pipe.incr("orders").lpush(f"recent:{user_id}", first).zincrby("popularity", 1, first)
        priced, (order, _, _) = await asyncio.gather(self._priced(items), pipe.execute())
        return self.encode({"order_id": order, "total": priced["total"]}).decode()


@contextlib.asynccontextmanager
async def open_stack(name: str, api: str, redis_url: str) -> AsyncIterator[Stack]:
    """The stack's clients, opened once and closed at the end."""
    import logging  # noqa: PLC0415

    # No per-request log lines (a server that configures INFO logging would write one
    # for every HTTP request of its tools): every server pays the same.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    import redis.asyncio as aioredis  # noqa: PLC0415

    if name == "httpx":
        import httpx  # noqa: PLC0415
        from redis._parsers import _AsyncRESP2Parser  # noqa: PLC0415

        limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
        pool = aioredis.ConnectionPool.from_url(redis_url, parser_class=_AsyncRESP2Parser)
        redis = aioredis.Redis(connection_pool=pool)
        async with httpx.AsyncClient(base_url=api, limits=limits) as http:
            try:
                yield HttpxStack(http, redis)
            finally:
                await redis.aclose()
    elif name == "fast":
        import aiohttp  # noqa: PLC0415

        redis = aioredis.Redis.from_url(redis_url, max_connections=100)
        connector = aiohttp.TCPConnector(limit=100, keepalive_timeout=60)
        async with aiohttp.ClientSession(connector=connector) as http:
            try:
                yield FastStack(http, api, redis)
            finally:
                await redis.aclose()
    else:
        raise SystemExit(f"unknown stack {name!r}: one of {', '.join(STACKS)}")


def lifespan(name: str, api: str, redis_url: str, wrap: Any = None) -> Any:
    """A server lifespan (a function of the server returning an async context manager)
    that opens the stack and yields it, or ``wrap(stack)``."""

    @contextlib.asynccontextmanager
    async def enter(server: Any) -> AsyncIterator[Any]:
        async with open_stack(name, api, redis_url) as opened:
            yield opened if wrap is None else wrap(opened)

    return enter


def arguments(description: str) -> Any:
    """The command line every server of the workload takes."""
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api", required=True, help="the API stand-in's base URL")
    parser.add_argument("--redis", required=True, help="redis://host:port/db")
    parser.add_argument("--stack", choices=STACKS, default="httpx")
    parser.add_argument("--workers", type=int, default=1, help="processes serving the port")
    return parser.parse_args()


ENV = ("WORKLOAD_API", "WORKLOAD_REDIS", "WORKLOAD_STACK")


def export(args: Any) -> dict[str, str]:
    """The settings a worker process (started by a supervisor, not by this command line)
    reads back with `settings()`."""
    import os  # noqa: PLC0415

    values = dict(zip(ENV, (args.api, args.redis, args.stack), strict=True))
    os.environ.update(values)
    return values


def settings() -> tuple[str, str, str]:
    """(stack, api, redis URL) as `export` left them in the environment."""
    import os  # noqa: PLC0415

    api, redis_url, stack = (os.environ[k] for k in ENV)
    return stack, api, redis_url


def serve_uvicorn(module: str, factory: Any, args: Any) -> None:
    """Serve `factory()` (an ASGI app) under uvicorn: in this process for one worker,
    else through uvicorn's own workers, each importing `module` and calling its `app`."""
    from pathlib import Path  # noqa: PLC0415

    import uvicorn  # noqa: PLC0415

    export(args)
    where = {"host": args.host, "port": args.port, "log_level": "warning", "access_log": False}
    if args.workers == 1:
        uvicorn.run(factory(), **where)
        return
    here = str(Path(__file__).resolve().parent)
    uvicorn.run(f"{module}:app", factory=True, workers=args.workers, app_dir=here, **where)
