"""CORS for browser clients of the HTTP app, answered only for the origins the app lists.

A page on another origin (a web app, an inspector running in the browser) may call the
MCP endpoint only if the server says so: its `POST` with `Content-Type:
application/json` and the MCP headers is first announced by a preflight (`OPTIONS` with
`Access-Control-Request-Method`), and the page may read a response, and headers such as
`Mcp-Session-Id` or `WWW-Authenticate`, only if the response allows its origin.

Who is allowed is the same list the DNS-rebinding check already uses:
`HttpOptions.allowed_origins`. Listing an origin there means browsers from it are
wanted, so CORS is on for exactly those origins (`HttpOptions(cors=False)` leaves CORS
to your own middleware). Nothing else ever gets an `Access-Control-*` header: not an
origin allowed only by the loopback default, not `null`, and never `*`. Credentials are
not allowed: MCP sends its token in `Authorization`, which a page can set without them,
and cookies play no part.

A preflight carries no token, so behind an auth gate CORS sits in front of the gate
(`Cors.front`); without one the app asks `Cors.admit` once it has read the headers and
passed the rebinding check. Either way every actual response of a listed origin, errors
(400, 401, 403, 404) and SSE streams included, carries the origin and the headers a
client must read. An app that lists no origin runs no CORS code at all, and one without
auth pays a dictionary lookup for a request without an `Origin`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen.transports._asgi import (
    AppOptions,
    Receive,
    Scope,
    Send,
    json_response,
    judge_host_and_origin,
    route_path,
)

if TYPE_CHECKING:
    from mcpgen.auth._server import AuthGate

__all__ = ["ALLOW_HEADERS", "EXPOSE_HEADERS", "Cors", "answered", "with_cors"]

Serve = Callable[[Scope, Receive, Send], Awaitable[None]]

# Request headers a browser client may send: the ones our client and the 2026-07-28
# revision use. Any other `mcp-*` name asked for (the mirrored `Mcp-Param-*` ones) is
# allowed too, by echoing it.
ALLOW_HEADERS = (
    "content-type",
    "accept",
    "authorization",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
    "dpop",  # a DPoP proof (RFC 9449)
)
# Response headers a client must read (the rest it needs are CORS-safelisted).
EXPOSE_HEADERS = (
    "mcp-session-id",
    "mcp-protocol-version",
    "www-authenticate",
    "retry-after",
    "dpop-nonce",
)
MAX_AGE = 7200  # seconds; Chromium caps a cached preflight at two hours


class _Options(AppOptions, Protocol):
    """The app options read here (an `HttpOptions`): the shared ones and `cors`."""

    @property
    def cors(self) -> bool: ...


class _OldPaths(Protocol):
    sse_path: str

    def serves(self, path: str) -> bool: ...


class _App(Protocol):
    """What CORS needs of the HTTP app (an `McpAsgiApp`)."""

    @property
    def options(self) -> _Options: ...
    @property
    def legacy_sse(self) -> _OldPaths | None: ...
    @property
    def gate(self) -> AuthGate | None: ...


def with_cors(app: _App, serve: Serve) -> tuple[Cors | None, Serve]:
    """The CORS of an app that lists origins, and the function that serves a request.

    Without a listed origin (or with CORS off): no CORS, `serve` itself. Without auth:
    the app asks `Cors.admit` once it has read the request's headers (a request without
    an `Origin` costs nothing more). Behind an auth gate: preflights must be answered
    before the gate asks for a token, and its 401s must be readable, so `serve` is
    wrapped; the wrapper looks for the `Origin` itself."""
    options = app.options
    listed = options.allowed_origins if options.cors else None
    origins = frozenset(o for o in listed or () if o != "null")  # `null` is never echoed
    if not origins:
        return None, serve
    cors = Cors(app, origins)
    if app.gate is None:
        return cors, serve
    return None, functools.partial(cors.front, serve)


async def answered(message: dict[str, Any]) -> None:
    """What `Cors.admit` hands back for a preflight it answered: the request is done."""
    raise AssertionError("a preflight was answered already")


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return value  # type: ignore[no-any-return]
    return None


def _token(name: str) -> bool:
    """Whether a header name asked for is plain (letters, digits, dashes): only those are
    echoed back."""
    return name.isascii() and name.replace("-", "").isalnum()


_EXPOSE = ", ".join(EXPOSE_HEADERS).encode()
_ALLOW = frozenset(ALLOW_HEADERS)


class Cors:
    """The CORS answers of one app, for its listed origins."""

    def __init__(self, app: _App, origins: frozenset[str]) -> None:
        self.app = app
        # Per listed origin, what its actual responses get (built once).
        self.added = {
            origin: [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-expose-headers", _EXPOSE),
                (b"vary", b"origin"),
            ]
            for origin in origins
        }
        self.path = app.options.path.rstrip("/")

    async def front(self, serve: Serve, scope: Scope, receive: Receive, send: Send) -> None:
        """`serve` (an auth gate) behind CORS."""
        raw = _header(scope, b"origin")
        if raw is not None:
            send = await self.admit(scope, send, raw.decode("latin-1"))
            if send is answered:
                return
        await serve(scope, receive, send)

    async def admit(self, scope: Scope, send: Send, origin: str) -> Send:
        """For a request with an `Origin`: `send` itself when the origin is not listed;
        `answered` once a preflight from a listed one is answered; else a `send` that
        puts the CORS headers on the response."""
        added = self.added.get(origin)
        if added is None:
            return send
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            methods = self._methods(scope)
            if methods is not None:
                await self._preflight(scope, send, origin, methods)
                return answered

        async def send_allowed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":  # a fresh dict: ours to change
                message["headers"] = [*message.get("headers", ()), *added]
            await send(message)

        return send_allowed

    def _methods(self, scope: Scope) -> bytes | None:
        """The methods the endpoint at the request's path serves; None: not an endpoint
        of this app (the app answers as it would without CORS)."""
        path = route_path(scope)
        if path.rstrip("/") == self.path:
            return b"GET, POST, DELETE"
        old = self.app.legacy_sse
        if old is not None and old.serves(path):
            return b"GET" if (path.rstrip("/") or "/") == old.sse_path else b"POST"
        gate = self.app.gate
        # The gate answers a method other than GET on its metadata paths (only) with 405.
        if gate is not None and gate.metadata(scope, scope.get("root_path", "") + path) is not None:
            return b"GET"
        return None

    async def _preflight(self, scope: Scope, send: Send, origin: str, methods: bytes) -> None:
        host = _header(scope, b"host") or b""
        headers = {"host": host.decode("latin-1"), "origin": origin}
        bound = (scope.get("server") or ("", 0))[0]
        denied = judge_host_and_origin(self.app.options, bound, headers)
        if denied is not None:  # a Host the app refuses: the same 403, no CORS
            await json_response(send, denied, 403)
            return
        asked = (_header(scope, b"access-control-request-headers") or b"").decode("latin-1")
        extra = [
            name
            for name in (part.strip().lower() for part in asked.split(","))
            if name.startswith("mcp-") and name not in _ALLOW and _token(name)
        ]
        allow = ", ".join([*ALLOW_HEADERS, *extra]).encode("latin-1")
        answer = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", methods),
            (b"access-control-allow-headers", allow),
            (b"access-control-max-age", b"%d" % MAX_AGE),
            (b"vary", b"origin, access-control-request-headers"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": answer})
        await send({"type": "http.response.body", "body": b""})
