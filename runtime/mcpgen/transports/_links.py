"""The client links to a local server: a subprocess on stdio, or a server in this
process; and the one place that names every link (the HTTP ones live in
`_http_link` and `_sse_link`). See `_link_base` for what a link is.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

from mcpgen._errors import ConnectError, ConnectionClosedError
from mcpgen.transports._http_link import HttpLink
from mcpgen.transports._link_base import (
    Link,
    LinkBase,
    RequestId,
    SseEvent,
    endpoint_key,
    sse_events,
)
from mcpgen.transports._memory import MemoryConnection
from mcpgen.transports._port import ServerPort
from mcpgen.transports._sse_link import SseLink

__all__ = [
    "HttpLink",
    "Link",
    "MemoryLink",
    "SseEvent",
    "SseLink",
    "StdioLink",
    "endpoint_key",
    "sse_events",
]

log = logging.getLogger("mcpgen.client")

# What a dead server's stderr leaves for the error message: its last lines, each cut.
_TAIL_LINES = 20
_TAIL_WIDTH = 400
# After stdout ends: how long (seconds) the stderr pipe and the exit code may lag behind.
_SETTLE = 0.5


class StdioLink(LinkBase):
    """A server subprocess speaking newline-delimited JSON-RPC on its stdin/stdout.

    Its pipes are plain asyncio pipe transports: lines are split and delivered inside
    the read callback (no reader task, no stream buffer, no deferred hand-off), and
    writes wait only while the pipe is paused.

    The server's stderr is logged line by line (`mcpgen.client`, INFO) and its last
    lines are kept, so that when the server dies the connection's error (see
    `closed_reason`) shows why, e.g. the traceback of a server that failed to start."""

    def __init__(
        self,
        command: Sequence[str],
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        shutdown_grace: float = 2.0,
        max_line: int = 64 * 1024 * 1024,
    ) -> None:
        if not command:
            raise ValueError("a stdio server needs a command")
        self.command = list(command)
        self.env = env
        self.cwd = cwd
        self.grace = shutdown_grace
        self.max_line = max_line
        self.proc: subprocess.Popen[bytes] | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.paused: asyncio.Future[None] | None = None
        self.out = bytearray()
        self.err = bytearray()
        self.tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self.ended: set[str] = set()  # the output pipes that reached their end
        self.announced = False

    def key(self) -> str:
        return "stdio:" + "\x00".join(self.command)

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            self.proc = proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **(self.env or {})},
                cwd=self.cwd,
                bufsize=0,
            )
        except OSError as exc:  # no such program, not executable, bad cwd
            raise ConnectError(f"cannot start the server {self.command[0]!r}: {exc}") from exc
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        if stdin is None or stdout is None or stderr is None:  # pragma: no cover - PIPE given
            raise RuntimeError("the server's pipes were not created")
        await loop.connect_read_pipe(lambda: _Pipe(self._stdout, self._stdout_ended), stdout)
        await loop.connect_read_pipe(lambda: _Pipe(self._stderr, self._stderr_ended), stderr)
        self.stdin, _ = await loop.connect_write_pipe(lambda: _Pipe(None, None, self), stdin)

    def _stdout_ended(self) -> None:
        # The connection is over, but its error is announced only once stderr has been
        # read to its end and the exit code is known (each bounded by _SETTLE), so that
        # the message carries the server's last words.
        self.ended.add("stdout")
        self._settle(asyncio.get_running_loop().time() + _SETTLE)

    def _stderr_ended(self) -> None:
        self.ended.add("stderr")
        if self.err:
            self._stderr(b"\n")

    def _settle(self, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() < deadline and ("stderr" not in self.ended or self.returncode is None):
            loop.call_later(0.01, self._settle, deadline)
        elif not self.announced:
            self.announced = True
            self.on_closed()

    def closed_reason(self) -> str:
        """Why the connection ended: the exit code and the tail of the server's stderr."""
        return self._told("the server closed the connection")

    def _told(self, why: str) -> str:
        code = self.returncode
        if code is not None:
            why += f" (exit code {code})"
        if not self.tail:
            return why
        return why + "; its stderr ended with:\n" + "\n".join(f"  {line}" for line in self.tail)

    def _stdout(self, data: bytes) -> None:
        buffer = self.out
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end]).rstrip(b"\r")
            start = end + 1
            if line:
                try:
                    self.on_message(line, None, None)
                except Exception:  # one bad frame must not end the pipe's reader
                    log.exception("a frame from the server could not be handled")
        del buffer[:start]
        if len(buffer) > self.max_line:
            log.error("server line longer than %d bytes; discarded", self.max_line)
            buffer.clear()

    def _stderr(self, data: bytes) -> None:
        buffer = self.err
        buffer += data
        *lines, rest = bytes(buffer).split(b"\n")
        for line in lines:
            text = line.decode(errors="replace").rstrip()
            log.info("server stderr: %s", text)
            if text:
                self.tail.append(text[:_TAIL_WIDTH])
        buffer[:] = rest[-65536:]

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        if self.stdin is None or self.stdin.is_closing():
            raise ConnectionClosedError(self._told("the server's stdin is closed"))
        self.stdin.write(frame + b"\n")
        if self.paused is not None:
            await asyncio.shield(self.paused)

    async def close(self) -> None:
        """Close stdin, wait, then SIGTERM, wait, then SIGKILL (stdio transport page)."""
        proc = self.proc
        if proc is None:
            return
        if self.stdin is not None and not self.stdin.is_closing():
            self.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(sig)
            deadline = time.monotonic() + self.grace
            while proc.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if proc.poll() is not None:
                break
        self._resume()

    def _pause(self) -> None:
        if self.paused is None:
            self.paused = asyncio.get_running_loop().create_future()

    def _resume(self) -> None:
        paused, self.paused = self.paused, None
        if paused is not None and not paused.done():
            paused.set_result(None)


class _Pipe(asyncio.Protocol):
    """One end of a server's pipe: data to `deliver`, the end to `ended`; on stdin,
    flow control to the link."""

    def __init__(
        self,
        deliver: Callable[[bytes], None] | None,
        ended: Callable[[], None] | None,
        link: StdioLink | None = None,
    ) -> None:
        self.deliver = deliver
        self.ended = ended
        self.link = link

    def data_received(self, data: bytes) -> None:
        if self.deliver is not None:
            self.deliver(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.ended is not None:
            self.ended()
        if self.link is not None:
            self.link._resume()

    def pause_writing(self) -> None:
        if self.link is not None:
            self.link._pause()

    def resume_writing(self) -> None:
        if self.link is not None:
            self.link._resume()


class MemoryLink(LinkBase):
    """A server in this process (mcpgen.transports.MemoryConnection); `server` is an
    `mcpgen.Server`."""

    def __init__(self, server: ServerPort) -> None:
        self.server = server
        self.connection: MemoryConnection | None = None

    def key(self) -> str:
        return f"memory:{id(self.server)}"

    async def start(self) -> None:
        self.connection = MemoryConnection(self.server, sink=self._frame)

    def _frame(self, frame: bytes) -> None:
        if frame:
            self.on_message(frame, None, None)
        else:
            self.on_closed()

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        connection = self.connection
        if connection is None or connection.closed:
            raise ConnectionClosedError("the in-memory connection is closed")
        await connection.send(frame)

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()
