"""IntrospectionVerifier against a real local introspection endpoint (an HTTP server on
127.0.0.1 started here, counting the calls): refusals are cached (bounded, LRU, with a
ttl), concurrent checks of one new token make one call, and an endpoint that is slow
or down is left alone for a while (503 at once, not the timeout per new token)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from mcpgen import Context, Server
from mcpgen.auth import AccessToken, AuthSettings, IntrospectionVerifier, VerifierUnavailableError
from mcpgen.transports import McpAsgiApp
from tests.transports import asgidriver as driver


class Endpoint:
    """An RFC 7662 endpoint: `active` tokens are active, any other is not; `delay`
    makes it slow, `failing` makes it answer 503."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.active: set[str] = set()
        self.delay = 0.0
        self.failing = False
        self.status = 503  # what a failing endpoint answers
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                token = form.get("token", [""])[0]
                endpoint.calls.append(token)
                time.sleep(endpoint.delay)
                if endpoint.failing:
                    self.send_response(endpoint.status)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                answer: dict[str, Any] = {"active": False}
                if token in endpoint.active:
                    answer = {"active": True, "sub": "alice", "scope": "read"}
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the verifier may have given up waiting
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/introspect"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.close()


def verifier(endpoint: Endpoint, timeout: float = 5.0, **options: Any) -> IntrospectionVerifier:
    http = httpx.AsyncClient(timeout=timeout)
    return IntrospectionVerifier(endpoint.url, http=http, **options)


def test_a_refused_token_replayed_costs_one_call_per_ttl(endpoint: Endpoint) -> None:
    v = verifier(endpoint, negative_cache_seconds=0.5)

    async def scenario() -> None:
        for _ in range(50):
            assert await v.check("garbage") == "the token is not active"
        assert endpoint.calls == ["garbage"]
        await asyncio.sleep(0.6)  # the refusal is forgotten: asked again once
        for _ in range(10):
            assert await v.check("garbage") == "the token is not active"
        assert endpoint.calls == ["garbage", "garbage"]

    asyncio.run(scenario())


def test_the_refusal_cache_is_bounded_least_recently_used_out(endpoint: Endpoint) -> None:
    v = verifier(endpoint, negative_cache_size=3)

    async def scenario() -> None:
        for token in ("a", "b", "c"):
            await v.check(token)
        await v.check("a")  # a hit: "b" is now the least recently used
        await v.check("d")  # evicts "b"
        assert len(v.refusals) == 3
        before = len(endpoint.calls)
        for token in ("a", "c", "d"):
            await v.check(token)
        assert len(endpoint.calls) == before  # all three answered from the cache
        await v.check("b")
        assert endpoint.calls[-1] == "b" and len(endpoint.calls) == before + 1

    asyncio.run(scenario())


def test_concurrent_checks_of_one_new_token_make_one_call(endpoint: Endpoint) -> None:
    endpoint.delay = 0.3
    endpoint.active.add("fresh")
    v = verifier(endpoint)

    async def scenario() -> None:
        found = await asyncio.gather(*(v.check("fresh") for _ in range(20)))
        assert all(isinstance(f, AccessToken) for f in found)
        refused = await asyncio.gather(*(v.check("bad") for _ in range(20)))
        assert set(refused) == {"the token is not active"}

    asyncio.run(scenario())
    assert sorted(endpoint.calls) == ["bad", "fresh"]


@pytest.mark.slow
def test_a_slow_endpoint_is_left_alone_after_a_few_timeouts(endpoint: Endpoint) -> None:
    endpoint.delay = 2.0  # longer than the verifier's timeout
    endpoint.active.update({"t-late-1", "t-late-2"})
    v = verifier(endpoint, timeout=0.3, failure_threshold=3, backoff_seconds=0.8)

    async def scenario() -> None:
        for i in range(3):  # each of these waits out the timeout
            with pytest.raises(VerifierUnavailableError):
                await v.check(f"new-{i}")
        assert len(endpoint.calls) == 3
        started = time.monotonic()
        for i in range(20):  # the circuit is open: every new token fails at once
            with pytest.raises(VerifierUnavailableError):
                await v.check(f"newer-{i}")
        assert time.monotonic() - started < 0.2
        assert len(endpoint.calls) == 3
        await asyncio.sleep(0.9)  # the backoff is over; the endpoint still slow: one probe
        probes = await asyncio.gather(
            *(v.check(f"probe-{i}") for i in range(5)), return_exceptions=True
        )
        assert all(isinstance(p, VerifierUnavailableError) for p in probes)
        assert len(endpoint.calls) == 4  # one probe asked, the others failed at once
        endpoint.delay = 0.0  # it recovers; after the (doubled) backoff, a probe closes it
        await asyncio.sleep(1.7)
        assert isinstance(await v.check("t-late-1"), AccessToken)
        assert isinstance(await v.check("t-late-2"), AccessToken)
        assert v.circuit.failures == 0

    asyncio.run(scenario())


def test_an_endpoint_answering_errors_opens_the_circuit_too(endpoint: Endpoint) -> None:
    endpoint.failing = True
    v = verifier(endpoint, failure_threshold=2, backoff_seconds=5)

    async def scenario() -> None:
        for i in range(10):
            with pytest.raises(VerifierUnavailableError):
                await v.check(f"x{i}")
        assert len(endpoint.calls) == 2
        assert len(v.refusals) == 0  # a failure is no refusal: nothing cached as refused

    asyncio.run(scenario())


def test_a_token_the_endpoint_will_not_introspect_is_a_refusal(endpoint: Endpoint) -> None:
    """A 400 is about the token (refused, cached, the circuit stays closed); a 401 is
    about our credentials (no token can be judged)."""
    endpoint.failing, endpoint.status = True, 400
    v = verifier(endpoint, failure_threshold=2)

    async def scenario() -> None:
        for i in range(5):
            assert await v.check(f"odd{i}") == "the token is not active"
        assert await v.check("odd0") == "the token is not active"
        assert len(endpoint.calls) == 5 and v.circuit.failures == 0
        endpoint.status = 401
        with pytest.raises(VerifierUnavailableError):
            await v.check("fine")

    asyncio.run(scenario())


def test_the_http_app_answers_503_while_the_authorization_server_is_out_of_reach(
    endpoint: Endpoint,
) -> None:
    endpoint.failing = True
    server = Server("protected")

    @server.tool
    def whoami(ctx: Context) -> str:
        return str(ctx.auth.subject if ctx.auth else None)

    v = verifier(endpoint, failure_threshold=2, backoff_seconds=30)
    app = McpAsgiApp(server, auth=AuthSettings(v, resource="http://127.0.0.1:8000/mcp"))

    async def scenario() -> None:
        for i in range(6):
            headers = {**driver.LEGACY, "authorization": f"Bearer token-{i}"}
            exchange = driver.Exchange(app, "POST", headers, b"{}")
            status, response_headers = await exchange.start()
            body = await exchange.body()
            assert status == 503, body
            assert response_headers.get("retry-after") == "1"
            assert endpoint.url.encode() not in body and b"127.0.0.1" not in body
        assert len(endpoint.calls) == 2  # then the circuit answered

    asyncio.run(scenario())
