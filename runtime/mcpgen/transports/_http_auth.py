"""The HTTP app behind an `AuthGate` (`server.asgi_app(auth=...)`): metadata served,
bearer tokens required, per-feature scopes checked, then the app as usual.

Without auth the app serves requests directly and nothing of `mcpgen.auth` is loaded.
With it, each request first passes `guarded`:

- the protected resource metadata (any path under `/.well-known/oauth-protected-resource`
  that names this resource, mount prefix included) is answered here;
- a request for one of the app's own paths must carry a valid bearer token (401/400
  otherwise); the token's principal and the token go into the ASGI scope
  (`mcpgen.principal`, `mcpgen.auth`), where the app binds sessions, tasks and
  requestState to the principal and hands the token to handlers (`ctx.auth`);
- when some feature needs a scope, a POST's body is read here and checked (403
  `insufficient_scope`), then replayed to the app.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen import _jsonrpc as rpc
from mcpgen.transports._asgi import Receive, Scope, Send, json_response, read_body, route_path

if TYPE_CHECKING:
    from mcpgen.auth._metadata import AuthSettings
    from mcpgen.auth._server import AuthGate, FeatureScopes

__all__ = ["auth_gate", "guarded"]

Serve = Callable[[Scope, Receive, Send], Awaitable[None]]


class _Paths(Protocol):
    def serves(self, path: str) -> bool: ...


class _Options(Protocol):
    @property
    def max_body(self) -> int: ...


class _App(Protocol):
    """What the gate needs of the HTTP app (an `McpAsgiApp`)."""

    @property
    def options(self) -> _Options: ...

    @property
    def legacy_sse(self) -> _Paths | None: ...

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None: ...


def _owned(app: _App, gate: AuthGate, path: str) -> bool:
    """Whether `path` is one of the app's MCP endpoints (which need a token)."""
    if path == gate.path or path.rstrip("/") == gate.path:
        return True
    old = app.legacy_sse
    return old is not None and old.serves(path)


def auth_gate(
    app: _App, auth: AuthSettings | None, path: str, features: FeatureScopes | None
) -> tuple[AuthGate | None, Serve]:
    """The gate for `auth` (None without) and the function that serves a request."""
    if auth is None:
        return None, app._http
    from mcpgen.auth._server import AuthGate  # noqa: PLC0415 (only when auth is configured)

    gate = AuthGate(auth, path, features)
    return gate, functools.partial(guarded, app, gate)


async def guarded(app: _App, gate: AuthGate, scope: Scope, receive: Receive, send: Send) -> None:
    # The common case costs little: an unmounted endpoint, a token verified before.
    path = scope["path"]
    if path != gate.path and not _owned(app, gate, path := route_path(scope)):
        answer = gate.metadata(scope, scope.get("root_path", "") + path)
        if answer is None:
            await app._http(scope, receive, send)  # not ours: the app says 404
        else:
            await json_response(send, answer[1], answer[0], answer[2])
        return
    access = gate.known(scope) or await gate.admit(scope)
    if isinstance(access, tuple):
        await json_response(send, access[1], access[0], access[2])
        return
    scope["mcpgen.principal"] = access.subject or access.client_id  # `access.principal`
    scope["mcpgen.auth"] = access
    nonce = scope.get("mcpgen.dpop_nonce")  # the next DPoP nonce (`mcpgen.auth._dpop`)
    if nonce is not None:
        send = _with_nonce(send, nonce.encode())
    features = gate.features
    if scope["method"] != "POST" or features is None or not features.scoped:
        await app._http(scope, receive, send)
        return
    body = await read_body(receive, app.options.max_body)
    if body is None:
        frame = rpc.error_frame(None, rpc.INVALID_REQUEST, "request body too large", status=413)
        await json_response(send, frame, 413)
        return
    refused = gate.authorize(scope, access, body)
    if refused is not None:
        await json_response(send, refused[1], refused[0], refused[2])
        return
    await app._http(scope, _replay(body, receive), send)


def _with_nonce(send: Send, nonce: bytes) -> Send:
    """`send` adding `DPoP-Nonce` (and no-store, as a nonce must not be cached) to the
    response's headers."""

    async def sending(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            extra = [(b"dpop-nonce", nonce), (b"cache-control", b"no-store")]
            kept = [h for h in message.get("headers", []) if h[0].lower() != b"cache-control"]
            message = {**message, "headers": [*kept, *extra]}
        await send(message)

    return sending


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` as if the body had not been read yet."""
    pending: list[dict[str, Any]] = [{"type": "http.request", "body": body, "more_body": False}]

    async def again() -> dict[str, Any]:
        return pending.pop() if pending else await receive()

    return again
