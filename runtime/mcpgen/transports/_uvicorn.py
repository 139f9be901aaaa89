"""Serving the HTTP app under uvicorn, with the connection limits uvicorn lacks.

uvicorn bounds an idle keep-alive connection (`timeout_keep_alive`), but nothing bounds
a connection whose request headers never finish: one that connects and says nothing,
or sends a header line now and then (slowloris), stays open for as long as the client
likes, and a few hundred of them hold the server. `uvicorn_server` serves through a
subclass of uvicorn's HTTP protocol (httptools or h11, whichever it picked) that gives
each request's headers a deadline, `HttpOptions.header_timeout_seconds` from the
moment the connection opened or the previous response ended, and a size bound,
`max_header_bytes`; past either the client gets 408 (or 431) and the connection
closes. A request whose headers arrived is the app's from then on (its body has a
deadline of its own: `_limits`); a response that lasts (an SSE stream) is never cut.

The protocol subclass reads attributes of uvicorn's protocols: `cycle` (the
request being served), its `response_complete` and `more_body`, which both implementations have
had since uvicorn 0.13; the tests in `tests/transports/test_slow_clients.py` run real
sockets against it, so a uvicorn that changes them fails there, not in production.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import socket
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Protocol

from mcpgen._errors import ConfigurationError
from mcpgen.transports._asgi import AppOptions, Receive, Scope, Send, served_urls

if TYPE_CHECKING:
    import uvicorn

__all__ = ["ServedApp", "uvicorn_server"]

log = logging.getLogger("mcpgen.http")
_LINGER = 2.0  # seconds a connection accepted before a shutdown may take to send its request
_ACCESS_LEVELS = ("trace", "debug", "info")  # uvicorn's levels that show access lines
_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-length: 0\r\nconnection: close\r\n\r\n"
)


class ServingOptions(AppOptions, Protocol):
    """The app options the server reads (an `HttpOptions`)."""

    @property
    def header_timeout_seconds(self) -> float: ...
    @property
    def max_header_bytes(self) -> int: ...
    @property
    def idle_connection_seconds(self) -> float: ...
    @property
    def max_connections(self) -> int | None: ...


class ServedApp(Protocol):
    """An ASGI app that ends its open streams on `shutdown` (an `McpAsgiApp`)."""

    @property
    def options(self) -> ServingOptions: ...

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    async def shutdown(self, busy: Callable[[], bool] | None = None) -> None: ...


def uvicorn_server(
    app: ServedApp,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    announce: IO[str] | None = None,
    ready: Callable[[], None] | None = None,
    signal_exit: bool = True,
    **config: Any,
) -> uvicorn.Server:
    """A uvicorn server for `app` that drains when stopped: it stops accepting first,
    then the app's drain runs (`_drain`: listen and GET streams end at once, in-flight
    requests and tasks get `shutdown_grace_seconds`), then uvicorn's own shutdown. With
    `announce`, the URLs it serves are written there once it listens (the bound port,
    also when `port` is 0); `ready` is called then too. `signal_exit`: after a clean
    stop on SIGTERM, exit by that signal (as uvicorn does); False returns (status 0,
    what a supervised worker reports).

    The connection limits come from `app.options` (`HttpOptions`): the header deadline
    and size (see the module docstring), `idle_connection_seconds` as uvicorn's
    `timeout_keep_alive`, `max_connections` as its `limit_concurrency`. A keyword in
    `config` overrides any of them."""
    try:
        import uvicorn  # noqa: PLC0415 (optional: the http extra)
    except ImportError:
        raise ConfigurationError("HTTP serving needs uvicorn: pip install 'mcpgen[http]'") from None

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if announce is not None and self.started and self.servers:
                bound = self.servers[0].sockets[0].getsockname()[1]
                scheme = "https" if config.get("ssl_certfile") else "http"
                announce.write(served_urls(app.options, host, bound, scheme))
                announce.flush()
            if ready is not None and self.started:
                ready()

        stopped_by = ""  # the signal's name, set in the handler and said in `shutdown`

        def _protocols(self) -> Callable[[], asyncio.Protocol]:
            """What makes a connection's protocol (as uvicorn's `startup` does)."""
            protocol: Any = self.config.http_protocol_class  # (its keywords are uvicorn's)
            return functools.partial(
                protocol,
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
            )

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.stopped_by = self.stopped_by or signal.Signals(sig).name
            super().handle_exit(sig, frame)
            if not signal_exit and sig == signal.SIGTERM:  # (uvicorn re-raises it at the end)
                captured = getattr(self, "_captured_signals", [])
                while sig in captured:
                    captured.remove(sig)

        async def shutdown(self, sockets: Any = None) -> None:
            _say_stopping(announce, self.stopped_by)
            for listening in self.servers:  # no new connection: they go to other workers
                if not sockets:  # bound here, ours alone: what the kernel queued is served
                    await _take_queued(listening, self._protocols(), self.config.ssl)
                listening.close()
            for sock in sockets or []:
                sock.close()
            for connection in list(self.server_state.connections):
                connection.shutdown()  # idle ones close; the others after their response
            await app.shutdown(busy=lambda: bool(self.server_state.connections))
            await super().shutdown(sockets)

    options = app.options
    config.setdefault("timeout_graceful_shutdown", options.shutdown_grace_seconds)
    config.setdefault("timeout_keep_alive", options.idle_connection_seconds)
    config.setdefault("limit_concurrency", options.max_connections)
    config.setdefault("h11_max_incomplete_event_size", options.max_header_bytes)
    # An access line per request only where the log level shows it: below that uvicorn
    # still builds each line's arguments before the logger drops it.
    level = str(config.get("log_level", "info")).lower()
    config.setdefault("access_log", level in _ACCESS_LEVELS)
    config["http"] = _bounded(
        config.get("http", "auto"), options.header_timeout_seconds, options.max_header_bytes
    )
    return _Server(uvicorn.Config(app, host=host, port=port, lifespan="on", workers=1, **config))


async def _take_queued(
    listening: asyncio.Server, protocols: Callable[[], asyncio.Protocol], ssl: Any
) -> None:
    """Accept the connections the kernel holds for `listening` before it closes: closing
    a listening socket resets them, and a proxy that already sent a request on one
    (its connect had succeeded) may not send it again."""
    loop = asyncio.get_running_loop()
    taken = []
    for listener in listening.sockets:
        with socket.socket(fileno=os.dup(listener.fileno())) as sock:
            sock.setblocking(False)
            while True:
                try:
                    conn, _ = sock.accept()
                except OSError:  # BlockingIOError: none left
                    break
                conn.setblocking(False)
                taken.append(loop.connect_accepted_socket(protocols, conn, ssl=ssl))
    await asyncio.gather(*taken, return_exceptions=True)


def _say_stopping(announce: IO[str] | None, signal_name: str) -> None:
    """One line when a server stops (where the URLs were announced, else the log)."""
    line = f"mcpgen: {signal_name + ' received, ' if signal_name else ''}stopping"
    if announce is None:
        logging.getLogger("mcpgen.server").info("%s", line)
    else:
        announce.write(line + "\n")
        announce.flush()


def _bounded(http: Any, seconds: float, most: int) -> Any:
    """uvicorn's HTTP protocol class `http` (a name or a class) with a header deadline
    and size bound; a protocol this module does not know is left as it is (logged)."""
    from uvicorn.config import HTTP_PROTOCOLS  # noqa: PLC0415 (the http extra)
    from uvicorn.importer import import_from_string  # noqa: PLC0415

    base = import_from_string(HTTP_PROTOCOLS.get(http, http)) if isinstance(http, str) else http
    if not (isinstance(base, type) and issubclass(base, _known_protocols(base))):
        log.warning("no header deadline for the HTTP protocol %r: bound it in a proxy", http)
        return http
    return _with_deadline(base, seconds, most)


def _known_protocols(base: type[Any]) -> tuple[type[Any], ...]:
    """uvicorn's protocol classes `base` may derive from, importing only the module
    `base` comes from (the h11 package stays unloaded when httptools serves)."""
    if base.__module__ == "uvicorn.protocols.http.httptools_impl":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: PLC0415

        return (HttpToolsProtocol,)
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # noqa: PLC0415
    except ImportError:  # httptools is not installed
        return (H11Protocol,)
    return (H11Protocol, HttpToolsProtocol)


def _with_deadline(base: type[Any], seconds: float, most: int) -> type[asyncio.Protocol]:
    class HeaderDeadline(base):  # type: ignore[misc]
        """`base` whose requests' headers must arrive within `seconds` and `most` bytes."""

        _header_timer: asyncio.TimerHandle | None = None
        _header_bytes = 0
        _tail = b""  # the last bytes counted, for a terminator split between reads
        _ended = False  # the headers are all here; uvicorn takes the request when it can
        _served = False  # a request came on this connection
        _draining = False  # shut down before its first request came: that one closes it

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            cycle, waiting = self.cycle, self._waiting()
            super().data_received(data)
            if self.cycle is not cycle:  # a request's headers are complete
                self._disarm()
                self._ended, self._served = False, True
                if self._draining and self.cycle is not None:
                    self.cycle.keep_alive = False
            elif waiting and self._waiting() and not self._ended:
                self._count(data)

        def shutdown(self) -> None:
            """A connection accepted just before the server stopped accepting has had
            no chance to send its request (a proxy writes it right after connecting):
            its first request is served, with `connection: close`, if it comes within
            `_LINGER` seconds. Closing it unanswered would fail a request that no
            client or proxy may send again. Other connections: as uvicorn does."""
            if self._served or self.cycle is not None or self.transport.is_closing():
                super().shutdown()
            elif not self._draining:
                self._draining = True
                asyncio.get_running_loop().call_later(_LINGER, self._linger_over)

        def _linger_over(self) -> None:
            if self.cycle is None and not self.transport.is_closing():
                base.shutdown(self)

        def _count(self, data: bytes) -> None:
            """Bytes of a request's head (a body sent with it in one write is not)."""
            if self.transport.is_closing():
                return
            if self._header_timer is None:
                self._arm()
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            if end >= 0:
                if self._header_bytes - len(self._tail) + end + 4 > most:
                    self._refuse(_TOO_LARGE)
                else:
                    self._ended = True
                    self._disarm()
                return
            self._header_bytes += len(data)
            self._tail = seen[-3:]
            if self._header_bytes > most:
                self._refuse(_TOO_LARGE)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _waiting(self) -> bool:
            """Whether the connection waits for a request's headers: no request is
            being served, and the last one's body has all arrived (a response may end
            before the body it did not read)."""
            cycle = self.cycle
            return cycle is None or (bool(cycle.response_complete) and not cycle.more_body)

        def _arm(self) -> None:
            self._header_bytes, self._tail = 0, b""
            loop = asyncio.get_running_loop()
            self._header_timer = loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            timer, self._header_timer = self._header_timer, None
            if timer is not None:
                timer.cancel()

        def _expired(self) -> None:
            self._header_timer = None
            if self._waiting() and not self._ended:
                self._refuse(_TIMEOUT)

        def _refuse(self, answer: bytes) -> None:
            self._disarm()
            transport = self.transport
            if not transport.is_closing():
                transport.write(answer)
                transport.close()

    HeaderDeadline.__name__ = HeaderDeadline.__qualname__ = f"HeaderDeadline{base.__name__}"
    return HeaderDeadline
