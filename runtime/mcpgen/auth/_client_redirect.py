"""How the user's authorization reaches the client: a `RedirectHandler` sends the
user agent to the authorization URL and returns the parameters of the redirect that
comes back to `redirect_uri`.

`LoopbackRedirect` opens the browser and receives the redirect on a loopback port
(RFC 8252); `HeadlessRedirect` fetches the authorization URL itself and reads the
redirect's `Location`, for authorization servers that approve without a user (tests,
the conformance suite's mock servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import webbrowser
from collections.abc import Callable
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

import httpx

from mcpgen.auth._discovery import AuthorizationError

__all__ = ["HeadlessRedirect", "LoopbackRedirect", "RedirectHandler"]


class RedirectHandler(Protocol):
    """The redirect half of the authorization code flow."""

    @property
    def redirect_uri(self) -> str:
        """Where the authorization server sends the user agent back (registered with
        the client)."""
        ...

    async def authorize(self, url: str, state: str) -> dict[str, str]:
        """Send the user to `url`; the query parameters of the redirect back whose
        `state` is `state` (a redirect with any other state is not the answer)."""
        ...


def _parameters(location: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(location).query, keep_blank_values=True))


class HeadlessRedirect:
    """Follows the authorization URL without a browser and reads the redirect."""

    def __init__(
        self,
        redirect_uri: str = "http://localhost:3000/callback",
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._redirect_uri = redirect_uri
        self.transport = transport

    @property
    def redirect_uri(self) -> str:
        return self._redirect_uri

    async def authorize(self, url: str, state: str) -> dict[str, str]:
        async with httpx.AsyncClient(transport=self.transport, follow_redirects=False) as http:
            try:
                response = await http.get(url)
            except httpx.HTTPError as exc:
                raise AuthorizationError(f"authorization request failed: {exc}") from exc
        location = response.headers.get("location")
        if not response.is_redirect or location is None:
            raise AuthorizationError(
                f"the authorization endpoint answered HTTP {response.status_code}, not a redirect"
            )
        target = location.split("?", 1)[0]
        if target != self._redirect_uri.split("?", 1)[0]:
            raise AuthorizationError(f"redirected to {target!r}, not to the redirect URI")
        return _parameters(location)


_PAGE = (
    "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
    "content-length: {length}\r\nconnection: close\r\n\r\n{body}"
)


class LoopbackRedirect:
    """Opens the authorization URL in a browser and waits for the redirect on
    `http://127.0.0.1:<port><path>` (port 0: one the system picks, kept for the life of
    this object)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        open_url: Callable[[str], object] = webbrowser.open,
    ) -> None:
        self.host, self.port, self.path = host, port, path
        self.timeout = timeout
        self.open_url = open_url
        self._socket: socket.socket | None = None

    def _bind(self) -> socket.socket:
        if self._socket is None:
            self._socket = socket.create_server((self.host, self.port))
            self.port = self._socket.getsockname()[1]
        return self._socket

    @property
    def redirect_uri(self) -> str:
        self._bind()
        return f"http://{self.host}:{self.port}{self.path}"

    async def authorize(self, url: str, state: str) -> dict[str, str]:
        answer: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                status, body = await self._callback(reader, state, answer)
                page = _PAGE.format(status=status, length=len(body.encode()), body=body)
                writer.write(page.encode())
                await writer.drain()
            except (OSError, ValueError, asyncio.IncompleteReadError):
                pass  # a broken or oversized request: ignore it, keep waiting
            finally:
                writer.close()

        server = await asyncio.start_server(serve, sock=self._bind())
        try:
            await asyncio.to_thread(self.open_url, url)
            return await asyncio.wait_for(answer, self.timeout)
        except TimeoutError:
            raise AuthorizationError("no authorization arrived in time") from None
        finally:
            server.close()
            self._socket = None  # closed with the server; bound again (same port) if needed
            with contextlib.suppress(Exception):
                await server.wait_closed()

    async def _callback(
        self,
        reader: asyncio.StreamReader,
        state: str,
        answer: asyncio.Future[dict[str, str]],
    ) -> tuple[str, str]:
        line = (await asyncio.wait_for(reader.readline(), 10.0)).decode("latin-1")
        while (await asyncio.wait_for(reader.readline(), 10.0)).strip():
            pass  # the headers: nothing in them matters
        method, _, rest = line.partition(" ")
        target = rest.rpartition(" ")[0]
        if method != "GET" or target.split("?", 1)[0] != self.path:
            return "404 Not Found", "Not found."
        parameters = _parameters(target)
        if parameters.get("state") != state:
            # Not the answer to this request (a stale tab, or a forged redirect).
            return "400 Bad Request", "This authorization response is not the one expected."
        if not answer.done():
            answer.set_result(parameters)
        if "error" in parameters:
            return "200 OK", "Authorization was refused. You may close this window."
        return "200 OK", "Authorization complete. You may close this window."
