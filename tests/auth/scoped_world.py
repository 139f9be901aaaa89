"""A protected server (real uvicorn on 127.0.0.1, static tokens) whose scoped handlers
record every run, and one sender per way a body reaches the core: a 2026-07-28 request,
a 2025-11-25 session, a 2025-03-26 batch, and the HTTP+SSE `/messages` endpoint.

Used to check that a token lacking a scope never runs a handler needing it, whatever
the body looks like, and that no body is answered 500."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from mcpgen import Context, Server
from mcpgen.auth import AccessToken, AuthSettings, StaticTokenVerifier
from tests.transports.httpharness import modern_headers, rpc, serve

TOKENS = {
    "reader": AccessToken(subject="reader", scopes=frozenset({"read"})),
    "admin": AccessToken(subject="admin", scopes=frozenset({"read", "admin"})),
}
LEGACY = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
RAN: list[str] = []  # every scoped handler that ran, in this process


def build() -> Server:
    server = Server("scoped")

    @server.tool(scopes=["admin"])
    def admin_only() -> str:
        RAN.append("admin_only")
        return "admin access granted"

    @server.tool(scopes=["admin"], task="optional")
    async def admin_task(ctx: Context) -> str:
        RAN.append("admin_task")
        return "admin task done"

    @server.tool
    def echo(text: str = "") -> str:
        return text

    @server.prompt(scopes=["admin"])
    def admin_prompt() -> str:
        RAN.append("admin_prompt")
        return "secret prompt"

    @server.resource("res://secret", scopes=["admin"])
    def secret() -> str:
        RAN.append("secret")
        return "secret"

    @server.resource_template("res://vault/{id}", scopes=["admin"])
    def vault(id: str) -> str:
        RAN.append("vault")
        return id

    @server.completion()
    def complete(ref: Any, argument: str, value: str, context: dict[str, str]) -> list[str]:
        RAN.append("complete")
        return ["secret-value"]

    return server


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


Sender = Callable[[bytes], httpx.Response]


class World:
    """The running server and one sender per transport, all with the `reader` token."""

    def __init__(self, url: str, http: httpx.Client) -> None:
        self.url = url
        self.http = http
        self.sse_events: list[str] = []

    def modern(self, body: bytes, method: str = "tools/call", name: str = "admin_only") -> Any:
        headers = modern_headers(method, name) | bearer("reader")
        return self.http.post(self.url, headers=headers, content=body)

    def session(self, version: str, token: str = "reader") -> dict[str, str]:
        init = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "attacker", "version": "1"},
        }
        headers = LEGACY | bearer(token)
        made = self.http.post(self.url, headers=headers, content=rpc(0, "initialize", init))
        assert made.status_code == 200, made.text
        session = headers | {"mcp-session-id": made.headers["mcp-session-id"]}
        self.http.post(self.url, headers=session, content=rpc(None, "notifications/initialized"))
        return session

    def legacy_sender(self) -> Sender:
        session = self.session("2025-11-25")
        return lambda body: self.http.post(self.url, headers=session, content=body)

    def batch_sender(self) -> Sender:
        session = self.session("2025-03-26")
        ping = rpc("p", "ping")
        return lambda body: self.http.post(
            self.url, headers=session, content=b"[" + ping + b"," + body + b"]"
        )

    @contextlib.contextmanager
    def sse_sender(self) -> Iterator[Sender]:
        """POSTs to the old transport's `/messages` of one open `/sse` stream (whose
        events are collected in `sse_events`)."""
        origin = self.url.removesuffix("/mcp")
        found = threading.Event()
        endpoint: list[str] = []
        sockets: list[socket.socket] = []
        with httpx.Client(timeout=30) as streaming:

            def read() -> None:
                with (
                    contextlib.suppress(httpx.HTTPError),  # cut at the end (below)
                    streaming.stream("GET", origin + "/sse", headers=bearer("reader")) as stream,
                ):
                    sockets.append(stream.extensions["network_stream"].get_extra_info("socket"))
                    for line in stream.iter_lines():
                        if line.startswith("data:") and not endpoint:
                            endpoint.append(line[5:].strip())
                            found.set()
                        elif line.startswith("data:"):
                            self.sse_events.append(line[5:].strip())

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            try:
                assert found.wait(10), "no endpoint event"
                target = origin + endpoint[0]
                headers = {"content-type": "application/json"} | bearer("reader")
                init = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {},
                    "clientInfo": {"name": "attacker", "version": "1"},
                }
                self.http.post(target, headers=headers, content=rpc(0, "initialize", init))
                self.http.post(
                    target, headers=headers, content=rpc(None, "notifications/initialized")
                )
                yield lambda body: self.http.post(target, headers=headers, content=body)
            finally:
                # Closing the client from this thread leaves the reader blocked in its
                # read until the server ends the stream; shutting the socket down wakes it.
                for sock in sockets:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                reader.join(10)
                assert not reader.is_alive(), "the SSE reader did not end"


@contextlib.contextmanager
def world() -> Iterator[World]:
    auth = AuthSettings(
        StaticTokenVerifier(TOKENS),
        authorization_servers=["https://issuer.example"],
        scopes_supported=["read", "admin"],
    )
    with serve(build().asgi_app(auth=auth)) as (url, _), httpx.Client(timeout=30) as http:
        yield World(url, http)


def modern_call(params: dict[str, Any] | None = None, raw_extra: bytes = b"") -> bytes:
    """A 2026-07-28 tools/call of `admin_only`; `raw_extra` is spliced into params as
    written (numbers JSON allows but Python's json would not write)."""
    return call_body("tools/call", {"name": "admin_only", **(params or {})}, True, raw_extra)


def call_body(method: str, params: dict[str, Any], modern: bool, raw_extra: bytes = b"") -> bytes:
    p = dict(params)
    if modern:
        p["_meta"] = MODERN_META
    encoded = json.dumps(p).encode()
    if raw_extra:
        encoded = encoded[:-1] + b"," + raw_extra + b"}"
    return b'{"jsonrpc":"2.0","id":7,"method":"' + method.encode() + b'","params":' + encoded + b"}"
