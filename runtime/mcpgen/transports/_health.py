"""The health endpoint of the HTTP app (`HttpOptions.health_path`, `/healthz` by default).

A load balancer, an orchestrator's probe or a container's HEALTHCHECK asks `GET` (or
`HEAD`) there and gets `200 {"status":"ok"}` while the app serves and `503
{"status":"stopping"}` once its shutdown began (so a balancer drains it first). A
lifespan that fails to start never gets this far (uvicorn exits; a mounted app answers
that request 500). It says nothing about the server (no name, no version) and needs
no token, no session and no allowed Host: a probe addresses the process by whatever
name it knows it by. Any other path outside the MCP endpoints is a 404, as before; the
MCP endpoint's own path costs nothing more.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpgen.transports._asgi import Send, json_response, plain_response

__all__ = ["off_endpoint"]

_OK = b'{"status":"ok"}'
_STOPPING = b'{"status":"stopping"}'


class _Options(Protocol):
    @property
    def health_path(self) -> str | None: ...


class _App(Protocol):
    @property
    def options(self) -> _Options: ...
    @property
    def stopping(self) -> bool: ...


async def off_endpoint(app: _App, path: str, scope: dict[str, Any], send: Send) -> None:
    """Answer a request for a path that is no MCP endpoint: the health check, else 404."""
    health = app.options.health_path
    if health is None or path != health:
        await plain_response(send, 404, b"not found")
    elif scope["method"] not in ("GET", "HEAD"):
        await plain_response(send, 405, b"method not allowed", [(b"allow", b"GET, HEAD")])
    elif app.stopping:
        await json_response(send, _STOPPING, 503)
    else:
        await json_response(send, _OK, 200)
