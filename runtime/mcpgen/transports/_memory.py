"""An in-process connection to a server: the stdio framing without a process.

`MemoryConnection(server)` gives a client (or a test) `send(line)` and `receive()`;
with `sink`, the server's frames are handed to `sink(frame)` as they are produced
instead (and `sink(b"")` once closed). The server side is an ordinary core session, so
both eras and every feature work as they do over stdio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from mcpgen._server import Channel, deliver
from mcpgen.transports._background import start_kept
from mcpgen.transports._lifespan import Lifespan, lifespan_of
from mcpgen.transports._port import ServerPort

__all__ = ["MemoryConnection"]

_EOF = b""


class MemoryConnection(Channel):
    """A server connection inside the process, without bytes on a wire: frames go in
    with `send` and come out of `inbox` (or a `sink`). `Client.memory(server)` and the
    tests use it."""

    def __init__(self, server: ServerPort, sink: Callable[[bytes], None] | None = None) -> None:
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.sink = sink or self.inbox.put_nowait
        self.tasks: set[asyncio.Task[Any]] = set()
        self.session = server.session(self)
        self.closed = False
        self.lifespan = lifespan_of(server)  # held from the first message until close
        self.held = False
        self.starting: asyncio.Future[None] | None = None

    # -- server side ------------------------------------------------------------------------------
    def notify(self, frame: bytes) -> None:
        if not self.closed:
            self.sink(frame)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return start_kept(self.tasks, coro)

    # -- client side ------------------------------------------------------------------------------
    async def send(self, line: bytes) -> None:
        """Deliver one line to the server (replies arrive through `receive`)."""
        if self.closed:
            raise ConnectionError("the memory connection is closed")
        if self.lifespan is not None and not self.held:
            await self._hold(self.lifespan)
        deliver(self.session.receive(line, self), self)

    async def _hold(self, lifespan: Lifespan) -> None:
        # Every message sent while the lifespan is still starting waits for that one start
        # (none may reach a handler before it); a failed start is tried again next time.
        if self.starting is None:
            self.starting = asyncio.ensure_future(lifespan.acquire())
        starting = self.starting
        try:
            await asyncio.shield(starting)
        except BaseException:
            if starting.done() and (starting.cancelled() or starting.exception() is not None):
                self.starting = None
            raise
        self.held = True

    async def receive(self) -> bytes:
        """The next line from the server; raises EOFError once closed and drained."""
        frame = await self.inbox.get()
        if frame is _EOF and self.closed:
            raise EOFError
        return frame

    async def close(self) -> None:
        if self.closed:
            return
        self.session.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=2)
        self.closed = True
        self.sink(_EOF)
        starting = self.starting
        if not self.held and starting is not None and not starting.done():
            await asyncio.wait([starting])  # a start under way ends held: release it below
            self.held = not starting.cancelled() and starting.exception() is None
        if self.held and self.lifespan is not None:
            self.held = False
            await self.lifespan.release()
