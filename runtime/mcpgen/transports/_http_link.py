"""The client link of Streamable HTTP: every frame is a POST whose response (JSON or
an SSE stream) is fed back; a legacy session adds its id to every request, a GET
stream and a DELETE. Its older transport, HTTP+SSE, is its `fall_back`. A POST
answered 307/308 within the origin is sent again to the Location, which becomes the
link's URL (`redirect_target` says which hops are refused).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

from mcpgen._errors import (
    ConfigurationError,
    ConnectError,
    HttpStatusError,
    ProtocolViolationError,
    TransportError,
)
from mcpgen.transports._background import start_kept
from mcpgen.transports._link_base import (
    REDIRECTS,
    Attach,
    Link,
    LinkBase,
    RequestId,
    endpoint_key,
    httpx_client,
    mapped_http_errors,
    raw_lines,
    redirect_target,
    sse_events,
)
from mcpgen.transports._sse_link import SseLink

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpLink", "status_error"]


def status_error(what: str, response: httpx.Response, body: bytes) -> HttpStatusError:
    """An HTTP response that carried no JSON-RPC answer, as its TransportError."""
    text = body.decode(errors="replace").strip()[:300]
    status = response.status_code
    location = response.headers.get("location")
    where = f" (to {location})" if location else ""
    # The challenge of a 401/403 says what the server wants (RFC 6750, RFC 9728).
    challenge = response.headers.get("www-authenticate")
    where += f" [WWW-Authenticate: {challenge}]" if challenge else ""
    detail = f": {text}" if text else ""
    return HttpStatusError(f"{what} answered HTTP {status}{where}{detail}", status, text, location)


def _json_rpc(body: bytes) -> bool:
    """Whether a 401/403 body is JSON-RPC (an object or batch naming `jsonrpc`), not an
    HTTP-level answer such as an OAuth refusal. Only refused responses are looked at."""
    head = body.lstrip()[:1]
    return head == b"[" or (head == b"{" and b'"jsonrpc"' in body)


class HttpLink(LinkBase):
    """Streamable HTTP (see the module docstring)."""

    http = True
    max_resumptions = 3

    def __init__(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        auth: httpx.Auth | None = None,
    ) -> None:
        if client is not None and auth is not None:
            raise ConfigurationError("pass `auth` to your own httpx client instead")
        self.url = url
        self.auth = auth
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
        self.streams: dict[RequestId, asyncio.Task[None]] = {}
        self.background: set[asyncio.Task[Any]] = set()

    def key(self) -> str:
        return endpoint_key(self.url)

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx_client(self.timeout, self.auth)
        return self._client

    def legacy_sse(self) -> SseLink:
        """A link to the same URL over the deprecated HTTP+SSE transport, sharing this
        link's HTTP client."""
        auth = self.auth if self._client is None else None  # a made client has it already
        return SseLink(
            self.url, self.headers, self._client, self.timeout, owns_client=False, auth=auth
        )

    async def fall_back(self, attach: Attach, why: str) -> Link | None:
        """Open `legacy_sse()`; once its stream named its POST endpoint it replaces this
        link (which closes, leaving it the HTTP client). On failure nothing changes and
        a ConnectError tells `why` it was tried and what failed."""
        sse = self.legacy_sse()
        attach(sse)
        try:
            await sse.start()
        except BaseException as exc:
            await sse.close()
            if isinstance(exc, TransportError | OSError | TimeoutError):
                raise ConnectError(
                    f"{self.url}: {why + ', and ' if why else ''}the HTTP+SSE transport"
                    f" failed: {exc}"
                ) from exc
            raise
        sse.owns_client, self._owns_client = self._owns_client, False
        await self.close()
        return sse

    async def start(self) -> None:
        self.client  # noqa: B018 (creates the owned client now, not on the first send)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return start_kept(self.background, coro)

    async def send(
        self,
        frame: bytes,
        headers: Mapping[str, str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        if request_id is None:  # notifications and responses: wait for the 202
            await self._post(frame, headers or {}, None)
            return
        task = self._spawn(self._post(frame, headers or {}, request_id))
        self.streams[request_id] = task
        task.add_done_callback(lambda _: self.streams.pop(request_id, None))

    async def _post(
        self, frame: bytes, headers: Mapping[str, str], request_id: RequestId | None
    ) -> None:
        all_headers = {**self.base_headers, **headers}
        if self.session_id is not None:
            all_headers["mcp-session-id"] = self.session_id
        url, seen = self.url, None
        try:
            while True:  # a 307/308 to the same origin: the same POST to its Location
                with mapped_http_errors(f"POST {url}"):
                    async with self.client.stream(
                        "POST", url, content=frame, headers=all_headers
                    ) as response:
                        status = response.status_code
                        if status in REDIRECTS:
                            location = response.headers.get("location")
                            seen = seen or [url]
                            url = redirect_target(f"POST {url}", status, location, seen)
                            continue
                        if seen is not None:  # the endpoint moved: later requests go there
                            self.url = url
                        sid = response.headers.get("mcp-session-id")
                        if sid is not None and self.session_id is None:
                            self.session_id = sid
                        await self._consume(response, request_id)
                        return
        except TransportError as exc:
            if request_id is None:
                raise
            self.on_failure(request_id, exc)

    async def _consume(self, response: httpx.Response, request_id: RequestId | None) -> None:
        status = response.status_code
        ctype = response.headers.get("content-type", "")
        if ctype.startswith("text/event-stream"):
            last_id, retry_ms = await self._events(response, status, request_id)
            await self._resume(request_id, last_id, retry_ms)
            return
        body = await response.aread()
        answer = request_id is not None or status < 300
        if status in (401, 403) and not _json_rpc(body):
            answer = False  # an authorization refusal (RFC 6750's JSON): the status is it
        if answer and body.strip() and ctype.startswith("application/json"):
            self.on_message(body, status, request_id)
            # A JSON body is the whole answer: if it answered nothing, nothing will.
            if request_id is not None and self.waiting(request_id):
                text = body[:200].decode(errors="replace")
                breach = f"POST {self.url}: HTTP {status} body answers no request: {text}"
                self.on_failure(request_id, ProtocolViolationError(breach))
        elif status >= 300:  # no JSON-RPC answer: the status is the failure
            failure = status_error(f"POST {self.url}", response, body)
            if request_id is None:
                raise failure
            self.on_failure(request_id, failure)

    async def _events(
        self, response: httpx.Response, status: int, request_id: RequestId | None
    ) -> tuple[str | None, int]:
        """Feed an SSE stream's messages; returns its last event id and retry hint."""
        last_id, retry_ms = None, 1000
        async for event in sse_events(raw_lines(response.aiter_bytes())):
            last_id = event.id if event.id is not None else last_id
            retry_ms = event.retry if event.retry is not None else retry_ms
            payload = event.data.strip()  # a priming event has empty data: skipped
            if payload:
                self.on_message(payload.encode(errors="surrogateescape"), status, request_id)
        return last_id, retry_ms

    async def _resume(
        self, request_id: RequestId | None, last_id: str | None, retry_ms: int
    ) -> None:
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
            async with self.client.stream("GET", self.url, headers=headers) as response:
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

    async def _until_answered(self, request_id: RequestId) -> None:
        while self.waiting(request_id):
            await asyncio.sleep(0.02)

    def cancel(self, request_id: RequestId) -> bool:
        task = self.streams.pop(request_id, None)
        if task is not None:
            task.cancel()  # closing the response stream cancels a modern request
        return True

    async def session_started(self, version: str, wait: float = 5.0) -> None:
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
        """The session's GET stream; once it was open, a cut (its server died: behind a
        balancer another one serves the session) is followed by a new GET from the last
        event id, `max_resumptions` failed attempts in a row at most."""
        last_id, retry_ms, failures = None, 1000, 0
        while failures <= self.max_resumptions:
            headers = {
                **self.base_headers,
                **self.version_header,
                "accept": "text/event-stream",
                "mcp-session-id": self.session_id or "",
            }
            if last_id is not None:
                headers["last-event-id"] = last_id
            try:
                async with self.client.stream("GET", self.url, headers=headers) as response:
                    status = response.status_code
                    if status != 200 and (not opened.is_set() or status in (404, 405)):
                        opened.set()
                        return  # no standalone stream, or the session is gone
                    opened.set()
                    if response.status_code == 200:
                        failures = 0
                        async for event in sse_events(raw_lines(response.aiter_bytes())):
                            last_id = event.id if event.id is not None else last_id
                            retry_ms = event.retry if event.retry is not None else retry_ms
                            if payload := event.data.strip():
                                self.on_message(payload.encode(errors="surrogateescape"), 200, None)
            except Exception:
                if not opened.is_set():  # a server without a standalone stream
                    opened.set()
                    return
            failures += 1
            await asyncio.sleep(retry_ms / 1000)

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
