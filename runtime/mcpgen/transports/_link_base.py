"""What every client link is: the `Link` Protocol the connection depends on, the
callbacks it installs, and what the links share (SSE parsing, endpoint keys, httpx).

A link delivers every inbound frame to `on_message(frame, status, request_id)`:
`status` is the HTTP status of the response that carried it (None elsewhere) and
`request_id` the id of the request whose response carried it, when known, so an
error body without an id still reaches its caller. A request that fails in the
transport reaches `on_failure(request_id, error)` with a `TransportError` (a
`ProtocolViolationError` when a JSON response body answered no request); the end of
the connection reaches `on_closed()`. Links decide nothing about the protocol; they
say what they can do through plain attributes (`http`, `legacy_only`), never through
their class.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol
from urllib.parse import urljoin, urlsplit

from mcpgen._errors import (
    ClientError,
    ConfigurationError,
    ConnectError,
    ConnectionClosedError,
    HttpStatusError,
    TransportError,
    TransportTimeoutError,
)

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Attach",
    "Link",
    "LinkBase",
    "OnFailure",
    "MAX_REDIRECTS",
    "OnMessage",
    "REDIRECTS",
    "RequestId",
    "SseEvent",
    "endpoint_key",
    "httpx_client",
    "mapped_http_errors",
    "raw_lines",
    "redirect_target",
    "sse_events",
]

RequestId = int | str
OnMessage = Callable[[bytes, int | None, RequestId | None], None]
# A TransportError, or a ProtocolViolationError when a response body answered nothing.
OnFailure = Callable[[RequestId, ClientError], None]


class Link(Protocol):
    """One client-side connection to one server, as the client's connection sees it."""

    http: bool  # requests carry mirrored HTTP headers (Streamable HTTP, HTTP+SSE)
    legacy_only: bool  # the transport predates the modern era: no probe
    on_message: OnMessage
    on_failure: OnFailure
    on_closed: Callable[[], None]
    waiting: Callable[[RequestId], bool]  # is this request still awaited?

    def key(self) -> str:
        """Identifies the endpoint (era verdicts are cached per endpoint)."""
        ...

    async def start(self) -> None: ...

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        """Send one frame; a request's answer comes to `on_message` (or its failure to
        `on_failure`), a notification's or response's failure is raised here."""
        ...

    def cancel(self, request_id: RequestId) -> bool:
        """Stop waiting for `request_id` at the transport level; True if that itself is
        the cancellation (an HTTP stream closed), False if a notification is needed."""
        ...

    async def session_started(self, version: str) -> None:
        """The legacy handshake finished: open what the session needs to hear the
        server (Streamable HTTP: the standalone GET stream)."""
        ...

    async def fall_back(self, attach: Attach, why: str) -> Link | None:
        """The link of an older transport at the same address, `attach`ed and started,
        replacing this one (now closed); None when this transport has none. Raises a
        `ConnectError` saying `why` it was tried when the older transport fails too."""
        ...

    async def close(self) -> None: ...

    def closed_reason(self) -> str:
        """Why the server hung up, as far as the transport can tell (a stdio server's
        exit code and last stderr lines)."""
        ...


Attach = Callable[[Link], None]


def _no_message(frame: bytes, status: int | None, request_id: RequestId | None) -> None:
    pass


def _no_failure(request_id: RequestId, error: ClientError) -> None:
    pass


def _nothing() -> None:
    pass


def _not_waiting(request_id: RequestId) -> bool:
    return False


class LinkBase:
    """Defaults shared by the links: unwired callbacks and the optional capabilities
    (no transport-level cancel, nothing to open after the handshake, no older transport
    to fall back to)."""

    http = False
    legacy_only = False
    on_message: OnMessage = staticmethod(_no_message)
    on_failure: OnFailure = staticmethod(_no_failure)
    on_closed: Callable[[], None] = staticmethod(_nothing)
    waiting: Callable[[RequestId], bool] = staticmethod(_not_waiting)

    def closed_reason(self) -> str:
        return "the server closed the connection"

    def cancel(self, request_id: RequestId) -> bool:
        return False

    async def session_started(self, version: str) -> None:
        return None

    async def fall_back(self, attach: Attach, why: str) -> Link | None:
        return None


def endpoint_key(url: str) -> str:
    """An HTTP endpoint's key for the era verdict cache."""
    parts = urlsplit(url)
    return f"http:{parts.scheme}://{parts.netloc}{parts.path}"


# Only the redirects that keep the method and the body are followed: re-sending a
# JSON-RPC POST as a GET (301/302/303) would lose the request.
REDIRECTS = frozenset({307, 308})
MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


def redirect_target(what: str, status: int, location: str | None, seen: list[str]) -> str:
    """Where a 307/308 answer to a request sent to `seen[-1]` leads (appended to
    `seen`). The hop is refused with an HttpStatusError naming the status and the
    Location when it leaves the origin (scheme, host, port: credentials and headers
    must not travel elsewhere), names nothing, loops, or is one too many."""
    url = seen[-1]

    def refused(why: str) -> HttpStatusError:
        where = f" (to {location})" if location else ""
        return HttpStatusError(f"{what} answered HTTP {status}{where}: {why}", status, "", location)

    if not location:
        raise refused("a redirect without a Location")
    target = urljoin(url, location)
    if _origin(target) != _origin(url):
        raise refused("redirects are followed only to the same origin")
    if target in seen:
        raise refused("a redirect loop")
    if len(seen) > MAX_REDIRECTS:
        raise refused(f"more than {MAX_REDIRECTS} redirects")
    seen.append(target)
    return target


class SseEvent(NamedTuple):
    event: str  # "message" unless the event names another type
    data: str  # the data lines, joined by newlines ("" for a priming event)
    id: str | None
    retry: int | None  # milliseconds


async def raw_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The lines of a byte stream (ended by LF, CRLF or CR), its bytes kept as they came:
    what is not UTF-8 stays as surrogate escapes, so the frame decoder refuses it where a
    text decoder would have replaced it unseen."""
    pending = b""
    async for chunk in chunks:
        lines = (pending + chunk).splitlines(keepends=True)
        # The last piece may go on in the next chunk (a CR may be half of a CRLF).
        pending = lines.pop() if lines and lines[-1][-1:] != b"\n" else b""
        for line in lines:
            yield line.rstrip(b"\r\n").decode(errors="surrogateescape")
    if pending:
        yield pending.rstrip(b"\r\n").decode(errors="surrogateescape")


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
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)


def httpx_client(timeout: float, auth: httpx.Auth | None = None) -> httpx.AsyncClient:
    """An httpx client for the HTTP links: `timeout` for connecting and writing, none
    for reading (a stream may idle between events); `auth` signs every request."""
    try:
        import httpx  # noqa: PLC0415 (optional: the client extra)
    except ImportError:
        missing = "the HTTP client needs httpx: pip install 'mcpgen[client]'"
        raise ConfigurationError(missing) from None
    # Idle connections are dropped after 4 s: many servers (Node's http among them) close
    # theirs at 5 s, and a request written onto a connection the server is closing at
    # that moment fails with a read error instead of being answered.
    limits = httpx.Limits(keepalive_expiry=4.0)
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=None), auth=auth, limits=limits)


@contextlib.contextmanager
def mapped_http_errors(what: str) -> Iterator[None]:
    """httpx's exceptions as the `TransportError` family (`what`: the request, for the
    message); anything else passes through."""
    import httpx  # noqa: PLC0415 (loaded already: an httpx client made the request)

    try:
        yield
    except httpx.TimeoutException as exc:
        raise TransportTimeoutError(f"{what}: timed out ({type(exc).__name__})") from exc
    except httpx.ConnectError as exc:
        raise ConnectError(f"{what}: cannot connect: {exc}") from exc
    except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
        raise ConnectionClosedError(
            f"{what}: the connection broke: {type(exc).__name__}: {exc}"
        ) from exc
    except httpx.HTTPError as exc:
        raise TransportError(f"{what} failed: {type(exc).__name__}: {exc}") from exc
