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
- per-feature scopes are not judged here (no body is read): the core judges them on
  the request it dispatches and answers a `Refusal`, which `refuse` writes as the
  gate's 403 `insufficient_scope` challenge.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from mcpgen._server._authorize import Refusal
from mcpgen.transports._asgi import Receive, Scope, Send, json_response, route_path

if TYPE_CHECKING:
    from mcpgen.auth._metadata import AuthSettings
    from mcpgen.auth._server import AuthGate

__all__ = ["auth_gate", "guarded", "refuse"]

Serve = Callable[[Scope, Receive, Send], Awaitable[None]]


class _Paths(Protocol):
    def serves(self, path: str) -> bool: ...


class _App(Protocol):
    """What the gate needs of the HTTP app (an `McpAsgiApp`)."""

    @property
    def legacy_sse(self) -> _Paths | None: ...

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None: ...


def _owned(app: _App, gate: AuthGate, path: str) -> bool:
    """Whether `path` is one of the app's MCP endpoints (which need a token)."""
    if path == gate.path or path.rstrip("/") == gate.path:
        return True
    old = app.legacy_sse
    return old is not None and old.serves(path)


def auth_gate(app: _App, auth: AuthSettings | None, path: str) -> tuple[AuthGate | None, Serve]:
    """The gate for `auth` (None without) and the function that serves a request."""
    if auth is None:
        return None, app._http
    from mcpgen.auth._server import AuthGate  # noqa: PLC0415 (only when auth is configured)

    gate = AuthGate(auth, path)
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
    scope["mcpgen.principal"] = access.principal  # namespaced: user or client, per issuer
    scope["mcpgen.auth"] = access
    nonce = scope.get("mcpgen.dpop_nonce")  # the next DPoP nonce (`mcpgen.auth._dpop`)
    if nonce is not None:
        send = _with_nonce(send, nonce.encode())
    await app._http(scope, receive, send)


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


async def refuse(gate: AuthGate | None, scope: Scope, send: Send, frame: object) -> bool:
    """Write the answer to a request the core refused (a `Refusal`): the gate's 403
    challenge. False when `frame` is no refusal (or no gate)."""
    if gate is None or type(frame) is not Refusal:
        return False
    status, body, headers = gate.insufficient(scope, frame.scopes)
    await json_response(send, body, status, headers)
    return True
