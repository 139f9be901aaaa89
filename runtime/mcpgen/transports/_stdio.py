"""stdio: one JSON-RPC message per line on stdin/stdout, both eras.

Lines are handled inside the read callback: a sync handler's reply is written before
the next line is looked at, an async handler runs as a task (so a later
`notifications/cancelled` reaches it). Writes go through one asyncio pipe transport,
so they never interleave. stdout is reserved for protocol frames: file descriptor 1
is pointed at stderr while serving, so a stray `print` (or C-level write) cannot
corrupt the stream. CR before LF is tolerated, blank lines are skipped, a line over
the cap gets one JSON-RPC error and is discarded. EOF ends the session gracefully:
in-flight work gets a moment to finish (a sync handler's reply comes from a worker
thread, so even a quick one is in flight for a while), the rest is cancelled, pending
output flushed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import Callable, Coroutine
from typing import IO, Any

from mcpgen import _jsonrpc as rpc
from mcpgen._server import Channel, deliver
from mcpgen.transports._lifespan import lifespan_of
from mcpgen.transports._port import ServerPort, SessionPort

__all__ = ["serve_stdio"]

log = logging.getLogger("mcpgen.stdio")
MAX_LINE = 4 * 1024 * 1024


class _Writer(asyncio.Protocol):
    def __init__(self) -> None:
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


class _Connection(asyncio.Protocol, Channel):
    """The read side and the channel of one stdio session."""

    def __init__(
        self,
        open_session: Callable[[Channel], SessionPort],
        out: asyncio.WriteTransport | _FileWriter,
        max_line: int,
    ) -> None:
        self.out = out
        self.max_line = max_line
        self.session = open_session(self)
        self.buffer = bytearray()
        self.discarding = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self.eof: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.batch: list[bytes] | None = None

    # -- Channel -----------------------------------------------------------------------------
    def notify(self, frame: bytes) -> None:
        if self.batch is not None:
            self.batch.append(frame)
        else:
            self.out.write(frame + b"\n")

    # One ordered stream carries every kind of frame; bound directly, a reply costs no
    # extra call on the hot path.
    request = reply = _write = notify

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._track(task)
        return task

    # -- reading -------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        self.batch = []  # replies to a burst of lines go out in one write
        try:
            start = 0
            while True:
                end = buffer.find(b"\n", start)
                if end < 0:
                    break
                line = bytes(buffer[start:end])
                start = end + 1
                if self.discarding:
                    self.discarding = False
                    continue
                self._line(line)
            del buffer[:start]
            if len(buffer) > self.max_line:
                self._oversized()
        finally:
            frames, self.batch = self.batch, None
            if frames:
                self.out.write(b"\n".join(frames) + b"\n")

    def _oversized(self) -> None:
        if not self.discarding:
            message = f"message longer than {self.max_line} bytes; discarded"
            self._write(rpc.error_frame(None, rpc.INVALID_REQUEST, message))
        self.discarding = True
        self.buffer.clear()

    def _line(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return
        if len(line) > self.max_line:
            self._write(
                rpc.error_frame(
                    None, rpc.INVALID_REQUEST, f"message longer than {self.max_line} bytes"
                )
            )
            return
        deliver(self.session.receive(line, self), self)

    def _track(self, task: asyncio.Task[Any]) -> None:
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("handler task failed", exc_info=task.exception())

    def eof_received(self) -> bool | None:
        if self.buffer.strip() and not self.discarding:
            line, self.buffer = bytes(self.buffer), bytearray()
            self._line(line)  # a last line without its newline
        if not self.eof.done():
            self.eof.set_result(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)


async def serve_stdio(
    server: ServerPort,
    *,
    stdin: IO[Any] | None = None,
    stdout: IO[Any] | None = None,
    max_line: int = MAX_LINE,
    shutdown_grace: float = 2.0,
    finish_grace: float = 1.0,
) -> None:
    """Serve `server` on stdin/stdout until EOF, then return: work still in flight at
    EOF gets `finish_grace` seconds to end before it is cancelled, and `shutdown_grace`
    to unwind after that. The server's lifespan (if it has one) is entered before the
    first line is read and exited at the end; when it fails to enter, `StartupError`
    is raised and nothing is read."""
    graces = (finish_grace, shutdown_grace)
    lifespan = lifespan_of(server)
    if lifespan is None:
        await _serve(server, stdin, stdout, max_line, graces)
        return
    await lifespan.acquire()
    try:
        await _serve(server, stdin, stdout, max_line, graces)
    finally:
        await lifespan.release()


async def _serve(
    server: ServerPort,
    stdin: IO[Any] | None,
    stdout: IO[Any] | None,
    max_line: int,
    graces: tuple[float, float],
) -> None:
    finish_grace, shutdown_grace = graces
    loop = asyncio.get_running_loop()
    stdin = stdin if stdin is not None else sys.stdin
    if stdout is None:
        # Keep a private copy of the real stdout for frames; send fd 1 (and sys.stdout)
        # to stderr so nothing else can write into the protocol stream.
        sys.stdout.flush()
        protocol_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        stdout = os.fdopen(protocol_fd, "wb", buffering=0)
    # Pipe transports take pipes and sockets; anything else (a redirect to or from a
    # regular file, /dev/null, a terminal) gets plain blocking I/O instead: it never
    # blocks for long, and uvloop aborts the process on some of them.
    writer: _Writer | _FileWriter
    out_transport: asyncio.WriteTransport | _FileWriter
    if _is_plain(stdout):
        out_transport = writer = _FileWriter(stdout)
    else:
        out_transport, writer = await loop.connect_write_pipe(_Writer, stdout)
    connection = _Connection(server.session, out_transport, max_line)
    read_transport = None
    if _is_plain(stdin):
        connection.tasks.add(loop.create_task(_feed_from_file(connection, stdin)))
    else:
        read_transport, _ = await loop.connect_read_pipe(lambda: connection, stdin)
    await connection.eof
    # Graceful end: let quick work finish, cancel what is still running, let it unwind,
    # flush, close.
    if connection.tasks and finish_grace > 0:
        await asyncio.wait(connection.tasks, timeout=finish_grace)
    connection.session.close()
    for task in list(connection.tasks):
        task.cancel()
    if connection.tasks:
        await asyncio.wait(connection.tasks, timeout=shutdown_grace)
    if read_transport is not None:
        read_transport.close()
    out_transport.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(writer.closed, shutdown_grace)


def _is_plain(stream: IO[Any]) -> bool:
    """Neither a pipe nor a socket (a file, a character device such as /dev/null or a
    terminal)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))


class _FileWriter:
    """The write side when stdout is not a pipe or socket."""

    def __init__(self, stream: IO[Any]) -> None:
        self.fd = stream.fileno()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def close(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _feed_from_file(connection: _Connection, stream: IO[Any]) -> None:
    loop = asyncio.get_running_loop()
    fd = stream.fileno()
    while True:
        chunk = await loop.run_in_executor(None, os.read, fd, 65536)
        if not chunk:
            connection.eof_received()
            return
        connection.data_received(chunk)
