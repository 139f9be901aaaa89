"""Client-side links: they carry frames between a client and one server.

A link delivers every inbound frame to `on_message(frame, status, request_id)`:
`status` is the HTTP status of the response that carried it (None elsewhere) and
`request_id` the id of the request whose response carried it, when known, so an
error body without an id still reaches its caller. Links decide nothing about the
protocol; the client core does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from mcpgen._client import HTTP_STATUS_ONLY
from mcpgen._errors import ClientError, ConfigurationError
from mcpgen.transports._background import start_kept
from mcpgen.transports._memory import MemoryConnection

if TYPE_CHECKING:
    from mcpgen.transports._sse_link import SseLink

__all__ = [
    "HttpLink",
    "Link",
    "MemoryLink",
    "SseEvent",
    "StdioLink",
    "endpoint_key",
    "sse_events",
]

log = logging.getLogger("mcpgen.client")
OnMessage = Callable[[bytes, int | None, Any], None]


def endpoint_key(url: str) -> str:
    """An HTTP endpoint's key for the era verdict cache."""
    parts = urlsplit(url)
    return f"http:{parts.scheme}://{parts.netloc}{parts.path}"


class SseEvent(NamedTuple):
    event: str  # "message" unless the event names another type
    data: str  # the data lines, joined by newlines ("" for a priming event)
    id: str | None
    retry: int | None  # milliseconds


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """The events of an SSE stream, from its lines (comments skipped)."""
    event, data, event_id, retry, seen = "message", list[str](), None, None, False
    async for line in lines:
        if not line:
            if seen:
                yield SseEvent(event, "\n".join(data), event_id, retry)
            event, data, event_id, retry, seen = "message", [], None, None, False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        seen = True
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value or "message"
        elif name == "id":
            event_id = value
        elif name == "retry" and value.isdigit():
            retry = int(value)


class Link:
    on_message: OnMessage
    on_closed: Callable[[], None] = staticmethod(lambda: None)
    http = False
    legacy_only = False  # a transport that predates the modern era (no probe)

    def key(self) -> str:
        """Identifies the endpoint (the era verdict is cached per endpoint)."""
        raise NotImplementedError

    async def start(self) -> None:
        raise NotImplementedError

    async def send(
        self, frame: bytes, headers: dict[str, str] | None = None, request_id: Any = None
    ) -> None:
        raise NotImplementedError

    def cancel(self, request_id: Any) -> bool:
        """Stop waiting for `request_id` at the transport level; True if that itself is
        the cancellation (an HTTP stream closed), False if a notification is needed."""
        return False

    async def close(self) -> None:
        raise NotImplementedError


class StdioLink(Link):
    """A server subprocess speaking newline-delimited JSON-RPC on its stdin/stdout.

    Its pipes are plain asyncio pipe transports: lines are split and delivered inside
    the read callback (no reader task, no stream buffer, no deferred hand-off), and
    writes wait only while the pipe is paused."""

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

    def key(self) -> str:
        return "stdio:" + "\x00".join(self.command)

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.proc = proc = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(self.env or {})},
            cwd=self.cwd,
            bufsize=0,
        )
        stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
        if stdin is None or stdout is None or stderr is None:  # pragma: no cover - PIPE given
            raise RuntimeError("the server's pipes were not created")
        await loop.connect_read_pipe(lambda: _Pipe(self._stdout, self._ended), stdout)
        await loop.connect_read_pipe(lambda: _Pipe(self._stderr, None), stderr)
        self.stdin, _ = await loop.connect_write_pipe(lambda: _Pipe(None, None, self), stdin)

    def _ended(self) -> None:
        self.on_closed()

    def _stdout(self, data: bytes) -> None:
        buffer = self.out
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end]).rstrip(b"\r")
            start = end + 1
            if line:
                self.on_message(line, None, None)
        del buffer[:start]
        if len(buffer) > self.max_line:
            log.error("server line longer than %d bytes; discarded", self.max_line)
            buffer.clear()

    def _stderr(self, data: bytes) -> None:
        buffer = self.err
        buffer += data
        *lines, rest = bytes(buffer).split(b"\n")
        for line in lines:
            log.info("server stderr: %s", line.decode(errors="replace").rstrip())
        buffer[:] = rest[-65536:]

    async def send(
        self, frame: bytes, headers: dict[str, str] | None = None, request_id: Any = None
    ) -> None:
        if self.stdin is None or self.stdin.is_closing():
            raise ConnectionError("the server's stdin is closed")
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


class MemoryLink(Link):
    """A server in this process (mcpgen.transports.MemoryConnection)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.connection: Any = None

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
        self, frame: bytes, headers: dict[str, str] | None = None, request_id: Any = None
    ) -> None:
        await self.connection.send(frame)

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()


def httpx_client(timeout: float) -> Any:
    """An httpx client for the HTTP links: `timeout` for connecting and writing, none
    for reading (a stream may idle between events)."""
    try:
        import httpx  # noqa: PLC0415 (optional: the client extra)
    except ImportError:
        missing = "the HTTP client needs httpx: pip install 'mcpgen[client]'"
        raise ConfigurationError(missing) from None
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=None))


class HttpLink(Link):
    """Streamable HTTP: every frame is a POST whose response (JSON or SSE) is fed back;
    a legacy session adds its id to every request, a GET stream and a DELETE."""

    http = True
    waiting: Callable[[Any], bool] = staticmethod(lambda request_id: False)
    max_resumptions = 3

    def __init__(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        client: Any = None,
        timeout: float = 60.0,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.base_headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            **(headers or {}),
        }
        self._client = client
        self._owns_client = client is None
        self.timeout = timeout
        self.session_id: str | None = None
        self.version_header: dict[str, str] = {}
        self.streams: dict[Any, asyncio.Task[Any]] = {}
        self.background: set[asyncio.Task[Any]] = set()

    def key(self) -> str:
        return endpoint_key(self.url)

    def legacy_sse(self) -> SseLink:
        """A link to the same URL over the deprecated HTTP+SSE transport, sharing this
        link's HTTP client."""
        from mcpgen.transports._sse_link import SseLink  # noqa: PLC0415 (rarely needed)

        return SseLink(self.url, self.headers, self._client, self.timeout, owns_client=False)

    async def switch_to_sse(
        self, on_message: OnMessage, on_closed: Callable[[], None], why: str = ""
    ) -> SseLink:
        """Open `legacy_sse()`; once its stream named its POST endpoint it replaces this
        link (which closes, leaving it the HTTP client). On failure nothing changes and
        a ClientError tells `why` it was tried and what failed."""
        sse = self.legacy_sse()
        sse.on_message, sse.on_closed = on_message, on_closed
        try:
            await sse.start()
        except BaseException as exc:
            await sse.close()
            if isinstance(exc, ClientError | OSError | TimeoutError):
                raise ClientError(
                    f"{self.url}: {why + ', and ' if why else ''}the HTTP+SSE transport"
                    f" failed: {exc}"
                ) from exc
            raise
        sse.owns_client, self._owns_client = self._owns_client, False
        await self.close()
        return sse

    async def start(self) -> None:
        if self._client is None:
            self._client = httpx_client(self.timeout)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return start_kept(self.background, coro)

    async def send(
        self, frame: bytes, headers: dict[str, str] | None = None, request_id: Any = None
    ) -> None:
        task = self._spawn(self._post(frame, headers or {}, request_id))
        if request_id is not None:
            self.streams[request_id] = task
            task.add_done_callback(lambda _: self.streams.pop(request_id, None))
        else:
            await task  # notifications and responses: wait for the 202

    async def _post(self, frame: bytes, headers: dict[str, str], request_id: Any) -> None:
        all_headers = {**self.base_headers, **headers}
        if self.session_id is not None:
            all_headers["mcp-session-id"] = self.session_id
        try:
            async with self._client.stream(
                "POST", self.url, content=frame, headers=all_headers
            ) as response:
                sid = response.headers.get("mcp-session-id")
                if sid is not None and self.session_id is None:
                    self.session_id = sid
                await self._consume(response, request_id)
        except Exception as exc:  # the connection failed: tell the waiting request
            if request_id is not None:
                self._synthetic(
                    request_id, None, f"HTTP request failed: {type(exc).__name__}: {exc}"
                )

    async def _consume(self, response: Any, request_id: Any) -> None:
        status = response.status_code
        ctype = response.headers.get("content-type", "")
        if ctype.startswith("text/event-stream"):
            last_id, retry_ms = await self._events(response, status, request_id)
            await self._resume(request_id, last_id, retry_ms)
            return
        body = await response.aread()
        if body.strip() and ctype.startswith("application/json"):
            self.on_message(body, status, request_id)
        elif status >= 400 and request_id is not None:
            self._synthetic(request_id, status, body.decode(errors="replace")[:300])

    async def _events(self, response: Any, status: int, request_id: Any) -> tuple[str | None, int]:
        """Feed an SSE stream's messages; returns its last event id and retry hint."""
        last_id, retry_ms = None, 1000
        async for event in sse_events(response.aiter_lines()):
            last_id = event.id if event.id is not None else last_id
            retry_ms = event.retry if event.retry is not None else retry_ms
            payload = event.data.strip()  # a priming event has empty data: skipped
            if payload:
                self.on_message(payload.encode(), status, request_id)
        return last_id, retry_ms

    async def _resume(self, request_id: Any, last_id: str | None, retry_ms: int) -> None:
        """A legacy SSE stream that ended before its response: wait the server's `retry`,
        then GET with `Last-Event-ID` and read the response there (resumability)."""
        for _ in range(self.max_resumptions):
            if request_id is None or last_id is None or self.session_id is None:
                return
            if not self.waiting(request_id):
                return
            await asyncio.sleep(retry_ms / 1000)
            headers = {
                **self.base_headers,
                **self.version_header,
                "accept": "text/event-stream",
                "mcp-session-id": self.session_id,
                "last-event-id": last_id,
            }
            async with self._client.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    return
                reader = asyncio.ensure_future(self._events(response, 200, request_id))
                waiter = asyncio.ensure_future(self._until_answered(request_id))
                finished, _ = await asyncio.wait(
                    {reader, waiter}, return_when=asyncio.FIRST_COMPLETED
                )
                if reader in finished:
                    waiter.cancel()
                    last_id, retry_ms = reader.result()
                    continue
                reader.cancel()
                return

    async def _until_answered(self, request_id: Any) -> None:
        while self.waiting(request_id):
            await asyncio.sleep(0.02)

    def _synthetic(self, request_id: Any, status: int | None, text: str) -> None:
        code = -32000 if status is None else HTTP_STATUS_ONLY
        error = {"code": code, "message": text or f"HTTP {status}"}
        self.on_message(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode(),
            status,
            request_id,
        )

    def cancel(self, request_id: Any) -> bool:
        task = self.streams.pop(request_id, None)
        if task is not None:
            task.cancel()  # closing the response stream cancels a modern request
        return True

    async def open_session_stream(self, version: str, wait: float = 5.0) -> None:
        """The standalone GET stream of a legacy session (server-initiated messages);
        returns once the server answered it, so nothing sent on it can be missed."""
        self.version_header = {"mcp-protocol-version": version}
        if self.session_id is None:
            return
        opened = asyncio.Event()
        self._spawn(self._get(opened))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(opened.wait(), wait)

    async def _get(self, opened: asyncio.Event) -> None:
        headers = {
            **self.base_headers,
            **self.version_header,
            "accept": "text/event-stream",
            "mcp-session-id": self.session_id or "",
        }
        try:
            async with self._client.stream("GET", self.url, headers=headers) as response:
                opened.set()
                if response.status_code == 200:
                    await self._events(response, 200, None)
        except Exception:  # a server without a standalone stream: nothing to listen to
            opened.set()

    async def close(self) -> None:
        if self.session_id is not None and self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.delete(
                    self.url, headers={**self.base_headers, "mcp-session-id": self.session_id}
                )
        for task in list(self.background):
            task.cancel()
        if self.background:
            await asyncio.wait(self.background, timeout=2)
        if self._owns_client and self._client is not None:
            await self._client.aclose()
