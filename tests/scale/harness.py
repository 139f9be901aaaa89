"""Two workers of one server on one Redis, and a client that alternates between them.

Each worker is its own `Server` (built by the same function, as two processes would
build it) served by uvicorn in a thread of its own (its own event loop, its own Redis
connections). `RoundRobin` is an httpx transport that sends each request to the next
worker in turn: a plain balancer with no stickiness.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from mcpgen import Context, InputRequired, Server, elicit_form
from tests.stores.redis_server import server as redis_server
from tests.transports.httpharness import serve

KEY = "scale-test-state-key-0123456789"
FORM = {"type": "object", "properties": {"sure": {"type": "boolean"}}}


def workers_redis_url() -> str:
    """The database of the test redis-server that `workers` use: 1."""
    return redis_server().url.rsplit("/", 1)[0] + "/1"


def fresh_redis_url() -> str:
    """The test redis-server, database 1, emptied."""
    url = workers_redis_url()
    with socket.create_connection(("127.0.0.1", redis_server().port)) as sock:
        sock.sendall(b"SELECT 1\r\nFLUSHDB\r\n")
        got = b""
        while got.count(b"\r\n") < 2:
            got += sock.recv(64)
    return url


def build(url: str) -> Server:
    """The server every worker runs."""
    server = Server("scale", state_keys=[KEY], redis=url)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def confirm(ctx: Context, path: str) -> Any:
        answer = ctx.input("confirm")
        if answer is None:
            return InputRequired({"confirm": elicit_form(f"Delete {path}?", FORM)}, state=path)
        return f"{answer.action}: {ctx.state}"

    @server.tool
    async def ask(ctx: Context, path: str) -> str:
        answer = await ctx.elicit(f"Really delete {path}?", FORM, timeout=10)
        return f"{answer.action} {answer.content}"

    @server.tool
    def bump() -> str:
        server.notify_tools_changed()
        return "bumped"

    @server.tool
    async def chatty(ctx: Context) -> str:
        ctx.info("one")
        ctx.info("two")
        return "done"

    @server.tool(task="optional")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(task="required")
    async def vet(ctx: Context, name: str) -> str:
        first = await ctx.elicit(f"Vet {name}?", FORM)
        second = await ctx.elicit(f"Really vet {name}?", FORM)
        return f"{name}: {first.action} {second.action}"

    return server


class principal_from_header:  # noqa: N801 (used like the function it stands in for)
    """An authentication stand-in around an app: the `x-user` header is the principal."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # the app's options, lifespan, ... for uvicorn
        return getattr(self.app, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for name, value in scope["headers"]:
                if name == b"x-user":
                    scope = {**scope, "mcpgen.principal": value.decode()}
        await self.app(scope, receive, send)


@contextlib.contextmanager
def workers(
    n: int = 2, wrap: Callable[[Any], Any] | None = None
) -> Iterator[tuple[list[str], list[Server]]]:
    """`n` workers on one fresh Redis database; yields their endpoint URLs and servers."""
    url = fresh_redis_url()
    servers = [build(url) for _ in range(n)]
    with contextlib.ExitStack() as stack:
        urls = []
        for server in servers:
            app: Any = server.asgi_app()
            if wrap is not None:
                app = wrap(app)
            urls.append(stack.enter_context(serve(app))[0])
        yield urls, servers


class RoundRobin(httpx.AsyncBaseTransport):
    """Each request to the next of `urls` (same path), whatever it belongs to."""

    def __init__(self, urls: list[str], pin: dict[str, int] | None = None) -> None:
        self.pin = pin or {}  # the worker for requests of these methods (Mcp-Method header)
        self.targets = [httpx.URL(u) for u in urls]
        self.turn = itertools.cycle(range(len(urls)))
        self.inner = httpx.AsyncHTTPTransport()
        self.served = [0] * len(urls)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        index = self.pin.get(request.headers.get("mcp-method", ""), -1)
        if index < 0:
            index = next(self.turn)
        self.served[index] += 1
        target = self.targets[index]
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def balanced(
    urls: list[str], pin: dict[str, int] | None = None
) -> tuple[httpx.AsyncClient, RoundRobin]:
    transport = RoundRobin(urls, pin)
    return httpx.AsyncClient(transport=transport, timeout=30), transport
