"""The settings of the HTTP app (`HttpOptions`), limits included.

The limits keep one client from using the server against the others; each has a
default fit for a server facing the internet behind nothing, and `docs/guide/limits.md`
lists them with what a deployment adds in front (TLS, a proxy's own timeouts).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

__all__ = ["HttpOptions"]


class HttpOptions(msgspec.Struct, frozen=True):
    """Settings of the Streamable HTTP endpoint; `server.asgi_app(**options)` takes them."""

    path: str = "/mcp"
    max_body: int = 4 * 1024 * 1024
    keepalive_seconds: float = 15.0
    # None: protect when the listening socket is a loopback address.
    dns_rebinding_protection: bool | None = None
    allowed_hosts: Sequence[str] | None = None  # host names (any port), when protecting
    allowed_origins: Sequence[str] | None = None  # full origins, e.g. "https://app.example"
    cors: bool = True  # CORS answers for the listed allowed_origins; False: your middleware's
    sse_retry_ms: int = 3000
    shutdown_grace_seconds: float = 5.0
    session_idle_seconds: float = 1800.0
    max_sessions: int = 10_000
    # Legacy sessions one client (its principal; anonymous: its address) may hold; past
    # it, its own least recently used session goes. None: no quota.
    max_sessions_per_client: int | None = 100
    # A request's body must have arrived this many seconds after its headers (else 408).
    body_timeout_seconds: float = 30.0
    # Served by `uvicorn_server` (mcpgen serve, server.run): a request's headers must
    # have arrived this many seconds after the connection opened or its previous
    # response ended, in at most `max_header_bytes` (else 408 or 431, and the connection
    # closes); an idle keep-alive connection closes after `idle_connection_seconds`;
    # `max_connections` (None: no bound) answers 503 past that many connections.
    header_timeout_seconds: float = 10.0
    max_header_bytes: int = 64 * 1024
    idle_connection_seconds: float = 5.0
    max_connections: int | None = None
    # The deprecated 2024-11-05 HTTP+SSE transport (GET sse_path, POST messages_path);
    # sse_path=None turns it off.
    sse_path: str | None = "/sse"
    messages_path: str = "/messages"
    health_path: str | None = "/healthz"  # GET: 200 serving, 503 stopping (`_health`); None: off
