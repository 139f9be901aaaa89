"""A server's lifespan: the async context manager `Server(lifespan=fn)` makes with
`fn(server)`, entered before the first request is served and exited after the last.

`Lifespan` counts who holds it: the first holder enters it, the last one to let go
exits it, so several connections in one process (memory clients, a stdio session
and an HTTP app) share one entry. The value it yields reaches handlers as
`ctx.lifespan`.

The transports take hold where their serving starts: `serve_stdio` before it reads a
line, a `MemoryConnection` at its first message, the HTTP app at ASGI
`lifespan.startup` (exiting at `lifespan.shutdown`). An app mounted in a framework that
does not forward lifespan events to it takes hold at its first request instead, unless
the host entered it first with `app.lifespan` (`FastAPI(lifespan=mcp.lifespan)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeAlias

from mcpgen.transports._port import ServerPort

__all__ = ["AppLifespan", "Lifespan", "LifespanFactory", "StartupError", "lifespan_of"]

log = logging.getLogger("mcpgen.server")

LifespanFactory: TypeAlias = Callable[[Any], AbstractAsyncContextManager[Any]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class StartupError(RuntimeError):
    """The server's lifespan failed to enter: nothing is served. The message names the
    original error, which is the `__cause__`."""


class Lifespan:
    """The lifespan of `owner` (a Server): `factory(owner)` entered by the first
    `acquire`, exited by the matching last `release`; `publish` is handed the value it
    yielded (and None once exited)."""

    def __init__(
        self, factory: LifespanFactory, owner: object, publish: Callable[[Any], None]
    ) -> None:
        self.factory = factory
        self.owner = owner
        self.publish = publish
        self.holders = 0
        self._manager: AbstractAsyncContextManager[Any] | None = None
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def _lock(self) -> asyncio.Lock:
        # One lock per event loop: tests (and embedders) may serve one server from
        # several loops in turn, and a lock belongs to the loop it first waited on.
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            self._locks = {k: v for k, v in self._locks.items() if not k.is_closed()}
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def acquire(self) -> None:
        """Hold the lifespan, entering it if nobody does; a failure to enter raises
        `StartupError` (and nothing is held)."""
        async with self._lock():
            if self.holders == 0:
                try:
                    manager = self.factory(self.owner)
                    value = await manager.__aenter__()
                except Exception as exc:
                    raise StartupError(
                        f"the server's lifespan failed to start: {_describe(exc)}"
                    ) from exc
                self._manager = manager
                self.publish(value)
            self.holders += 1

    async def release(self) -> None:
        """Let go of the lifespan; the last holder exits it (its failure is logged)."""
        async with self._lock():
            if self.holders == 0:
                return
            self.holders -= 1
            if self.holders or self._manager is None:
                return
            manager, self._manager = self._manager, None
            self.publish(None)
            try:
                await manager.__aexit__(None, None, None)
            except Exception:
                log.exception("the server's lifespan failed while exiting")


def lifespan_of(server: object) -> Lifespan | None:
    """The lifespan a `ServerPort` carries (`mcpgen.Server.lifecycle`), if any."""
    found = getattr(server, "lifecycle", None)
    return found if isinstance(found, Lifespan) else None


class AppLifespan:
    """The lifecycle of one HTTP app: `start` (freeze the registry, take hold of the
    server's lifespan) once, from the ASGI lifespan protocol, a host's lifespan, or the
    first request; `stop` after the app's own shutdown."""

    def __init__(self, server: ServerPort, shutdown: Callable[[], Awaitable[None]]) -> None:
        self.server = server
        self.lifespan = lifespan_of(server)
        self.shutdown = shutdown
        self.started = False
        self.failure: StartupError | None = None  # why the last start failed
        self._held = False
        self._starting: asyncio.Lock | None = None

    async def start(self) -> None:
        if self.started:
            return
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.started:
                return
            self.server.freeze()  # the registry snapshot, before the first request
            if self.lifespan is not None:
                try:
                    await self.lifespan.acquire()
                except StartupError as exc:
                    self.failure = exc
                    raise
                self._held = True
            self.started = True

    async def stop(self) -> None:
        if self._held and self.lifespan is not None:
            self._held = False
            await self.lifespan.release()

    async def first_request(self, send: Send) -> bool:
        """Start at a request nobody started the app for; False (after a 500 answer)
        when the lifespan fails to enter."""
        try:
            await self.start()
        except StartupError as exc:
            log.error("%s", exc, exc_info=exc.__cause__)
            body = str(exc).encode()
            headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
            await send({"type": "http.response.start", "status": 500, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return False
        return True

    async def serve(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan protocol: start at startup (a failure is reported as
        `lifespan.startup.failed` with its message), shut down and stop at shutdown."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except StartupError as exc:
                    log.error("%s", exc, exc_info=exc.__cause__)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def host_lifespan(self, app: object = None) -> AbstractAsyncContextManager[None]:
        """For a host framework's own lifespan (`FastAPI(lifespan=mcp.lifespan)`, or
        `async with mcp.lifespan(app):` inside the host's): starts the app, and at the
        end shuts it down (open streams end) and exits the server's lifespan."""
        return self._hosted()

    @contextlib.asynccontextmanager
    async def _hosted(self) -> AsyncIterator[None]:
        await self.start()
        try:
            yield
        finally:
            await self.shutdown()


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
