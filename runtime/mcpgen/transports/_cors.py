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

The wrapper sits in front of the whole app (the auth gate included), so a preflight,
which carries no token, is answered before authentication; and every actual response of
an allowed origin, errors (401, 403, 404, 400) and SSE streams included, carries the
origin and the headers a client must read. An app that lists no origin is served
without the wrapper, and a request without a listed `Origin` costs one look through its
headers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen.transports._asgi import (
    Receive,
    Scope,
    Send,
    json_response,
    judge_host_and_origin,
    route_path,
)

if TYPE_CHECKING:
    from mcpgen.auth._server import AuthGate

__all__ = ["ALLOW_HEADERS", "EXPOSE_HEADERS", "with_cors"]

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
)
# Response headers a client must read (the rest it needs are CORS-safelisted).
EXPOSE_HEADERS = ("mcp-session-id", "mcp-protocol-version", "www-authenticate", "retry-after")
MAX_AGE = 7200  # seconds; Chromium caps a cached preflight at two hours


class _Options(Protocol):
    """The app options read here (an `HttpOptions`)."""

    @property
    def path(self) -> str: ...
    @property
    def cors(self) -> bool: ...
    @property
    def dns_rebinding_protection(self) -> bool | None: ...
    @property
    def allowed_hosts(self) -> Sequence[str] | None: ...
    @property
    def allowed_origins(self) -> Sequence[str] | None: ...
    @property
    def shutdown_grace_seconds(self) -> float: ...
    @property
    def sse_path(self) -> str | None: ...


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


def with_cors(app: _App, serve: Serve) -> Serve:
    """`serve` itself when the app lists no origin (or CORS is off), else `serve` behind
    the CORS answers for the listed origins."""
    options = app.options
    listed = options.allowed_origins if options.cors else None
    origins = frozenset(o for o in listed or () if o != "null")  # `null` is never echoed
    if not origins:
        return serve
    return _Cors(app, origins, serve).__call__


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


class _Cors:
    def __init__(self, app: _App, origins: frozenset[str], serve: Serve) -> None:
        self.app = app
        self.origins = frozenset(o.encode("latin-1") for o in origins)
        self.serve = serve
        self.path = app.options.path.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin")
        if origin is None or origin not in self.origins:
            await self.serve(scope, receive, send)  # not a browser from a listed origin
            return
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            methods = self._methods(scope)
            if methods is not None:
                await self._preflight(scope, send, origin, methods)
                return
        added = [
            (b"access-control-allow-origin", origin),
            (b"access-control-expose-headers", _EXPOSE),
            (b"vary", b"origin"),
        ]

        async def send_allowed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *added]}
            await send(message)

        await self.serve(scope, receive, send_allowed)

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

    async def _preflight(self, scope: Scope, send: Send, origin: bytes, methods: bytes) -> None:
        host = _header(scope, b"host") or b""
        headers = {"host": host.decode("latin-1"), "origin": origin.decode("latin-1")}
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
            (b"access-control-allow-origin", origin),
            (b"access-control-allow-methods", methods),
            (b"access-control-allow-headers", allow),
            (b"access-control-max-age", b"%d" % MAX_AGE),
            (b"vary", b"origin, access-control-request-headers"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": answer})
        await send({"type": "http.response.body", "body": b""})
