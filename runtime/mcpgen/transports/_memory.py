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
from mcpgen.transports._lifespan import lifespan_of
from mcpgen.transports._port import ServerPort

__all__ = ["MemoryConnection"]

_EOF = b""


class MemoryConnection(Channel):
    def __init__(self, server: ServerPort, sink: Callable[[bytes], None] | None = None) -> None:
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.sink = sink or self.inbox.put_nowait
        self.tasks: set[asyncio.Task[Any]] = set()
        self.session = server.session(self)
        self.closed = False
        self.lifespan = lifespan_of(server)  # held from the first message until close
        self.held = False

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
            self.held = True
            try:
                await self.lifespan.acquire()
            except BaseException:
                self.held = False
                raise
        deliver(self.session.receive(line, self), self)

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
        if self.held and self.lifespan is not None:
            self.held = False
            await self.lifespan.release()
