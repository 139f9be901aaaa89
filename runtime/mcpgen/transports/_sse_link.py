"""The client side of the deprecated HTTP+SSE transport (2024-11-05).

The client holds one GET stream open on the server's SSE URL. Its first event,
`endpoint`, names the URL to POST every client message to (resolved against the SSE
URL; another origin is refused); every later `message` event carries one server
message (responses, notifications, server-to-client requests). A POST only says
"accepted" (2xx); a refused POST fails the request it carried with the HTTP status. The
transport predates Streamable HTTP: legacy era only (the initialize handshake).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from mcpgen._errors import (
    ClientError,
    ConfigurationError,
    ConnectError,
    ConnectionClosedError,
    HttpStatusError,
    ProtocolViolationError,
    TransportError,
    TransportTimeoutError,
)
from mcpgen.transports._background import start_kept
from mcpgen.transports._link_base import (
    LinkBase,
    RequestId,
    endpoint_key,
    httpx_client,
    mapped_http_errors,
    raw_lines,
    sse_events,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["SseLink"]

log = logging.getLogger("mcpgen.client")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)


class SseLink(LinkBase):
    """One HTTP+SSE connection: a GET stream in, a POST per message out."""

    http = True
    legacy_only = True

    def __init__(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        *,
        owns_client: bool | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        if client is not None and auth is not None:
            raise ConfigurationError("pass `auth` to your own httpx client instead")
        self.url = url
        self.auth = auth
        self.headers = dict(headers or {})
        self._client = client
        self.owns_client = client is None if owns_client is None else owns_client
        self.timeout = timeout
        self.endpoint: str | None = None
        self._found: asyncio.Future[str] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._posts: set[asyncio.Task[Any]] = set()
        self._closing = False

    def key(self) -> str:
        return endpoint_key(self.url)

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx_client(self.timeout, self.auth)
        return self._client

    async def start(self) -> None:
        """Open the stream and wait (the client's timeout) for the `endpoint` event."""
        self._found = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read(self._found))
        try:
            self.endpoint = await asyncio.wait_for(asyncio.shield(self._found), self.timeout)
        except BaseException as exc:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
            if isinstance(exc, TimeoutError):
                raise TransportTimeoutError(
                    f"no `endpoint` event on the SSE stream of {self.url} within"
                    f" {self.timeout} s (is it an HTTP+SSE server?)"
                ) from None
            raise

    async def _read(self, found: asyncio.Future[str]) -> None:
        import httpx  # noqa: PLC0415 (loaded already: the client is an httpx one)

        headers = {**self.headers, "accept": "text/event-stream"}
        timeout = httpx.Timeout(self.timeout, read=None)  # the stream idles between events
        try:
            with mapped_http_errors(f"GET {self.url}"):
                async with self.client.stream(
                    "GET", self.url, headers=headers, timeout=timeout
                ) as response:
                    ctype = response.headers.get("content-type", "")
                    if response.status_code != 200 or not ctype.startswith("text/event-stream"):
                        raise HttpStatusError(
                            f"GET {self.url} answered HTTP {response.status_code}"
                            f" ({ctype or 'no content type'}), not an SSE stream",
                            response.status_code,
                            location=response.headers.get("location"),
                        )
                    async for event in sse_events(raw_lines(response.aiter_bytes())):
                        if event.event == "endpoint":
                            if not found.done():
                                found.set_result(self._resolve(event.data))
                        elif event.event == "message" and event.data.strip():
                            self._message(event.data)
            if not found.done():
                raise ConnectError(f"the SSE stream of {self.url} ended before its endpoint event")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, ClientError):
                exc = TransportError(f"GET {self.url} failed: {type(exc).__name__}: {exc}")
            if not found.done():
                found.set_exception(exc)
                return
            log.info("the SSE stream of %s broke: %s: %s", self.url, type(exc).__name__, exc)
        if not self._closing:  # the stream is the connection: its end is the server's
            self.on_closed()

    def _message(self, data: str) -> None:
        try:
            self.on_message(data.encode(errors="surrogateescape"), 200, None)
        except Exception:  # one bad frame must not end the stream (the connection)
            log.exception("a frame from the server could not be handled")

    def _resolve(self, data: str) -> str:
        endpoint = urljoin(self.url, data.strip())
        if _origin(endpoint) != _origin(self.url):
            raise ProtocolViolationError(
                f"the server's endpoint event names {endpoint!r}, another origin than"
                f" its SSE URL {self.url!r}: refused"
            )
        return endpoint

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return start_kept(self._posts, coro)

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        if self.endpoint is None or self._closing:
            raise ConnectionClosedError("the HTTP+SSE connection is not open")
        if request_id is None:  # notifications and responses: wait for the server's 2xx
            await self._post(self.endpoint, frame, headers)
            return
        self._spawn(self._request(self.endpoint, frame, headers, request_id))

    async def _request(
        self, endpoint: str, frame: bytes, headers: Mapping[str, str] | None, request_id: RequestId
    ) -> None:
        try:
            await self._post(endpoint, frame, headers)
        except TransportError as exc:  # the request was refused: its caller gets why
            self.on_failure(request_id, exc)

    async def _post(self, endpoint: str, frame: bytes, headers: Mapping[str, str] | None) -> None:
        """POST one message; the answer, if any, comes on the stream."""
        all_headers = {**self.headers, **(headers or {}), "content-type": "application/json"}
        with mapped_http_errors(f"POST {endpoint}"):
            response = await self.client.post(
                endpoint, content=frame, headers=all_headers, timeout=self.timeout
            )
        if not 200 <= response.status_code < 300:
            text = response.text.strip()[:300]
            challenge = response.headers.get("www-authenticate")
            raise HttpStatusError(
                f"POST {endpoint} answered HTTP {response.status_code}"
                + (f" [WWW-Authenticate: {challenge}]" if challenge else "")
                + (f": {text}" if text else ""),
                response.status_code,
                text,
                response.headers.get("location"),
            )

    async def close(self) -> None:
        """Close the stream (the end of the session for the server)."""
        self._closing = True
        tasks = [*self._posts, *([self._reader] if self._reader is not None else [])]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2)
        if self.owns_client and self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
