"""The client side of the framework layer: the default request timeout and per-call
override (the server is told to stop, `RequestTimeoutError` raised), client
middleware around every request, and the retry policy for idempotent requests."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
import uvicorn

from mcpgen import (
    Client,
    ClientCallNext,
    ClientRequest,
    ConfigurationError,
    Context,
    HttpStatusError,
    RequestTimeoutError,
    RetryPolicy,
    Server,
    TransportTimeoutError,
)
from mcpgen import types as t
from mcpgen.transports._asgi import read_body
from tests.framework.common import ERAS, run
from tests.transports.httpharness import running, serve


def build(seen: dict[str, Any]) -> Server:
    server = Server("slowpoke")

    @server.tool
    async def slow(ctx: Context, seconds: float) -> str:
        seen["started"] = seen.get("started", 0) + 1
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            seen["cancelled"] = seen.get("cancelled", 0) + 1
            raise
        return f"slept {seconds}"

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


async def wait_for(seen: dict[str, Any], key: str) -> None:
    for _ in range(200):
        if seen.get(key):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the server never saw {key!r}: {seen}")


@pytest.mark.parametrize("era", ERAS)
def test_the_default_timeout_cancels_on_the_server_and_a_call_may_override_it(era: str) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with Client.memory(build(seen), era=era, timeout=0.3) as client:
            with pytest.raises(RequestTimeoutError) as caught:
                await client.call_tool("slow", {"seconds": 30})
            assert isinstance(caught.value, TimeoutError)
            assert isinstance(caught.value, TransportTimeoutError)
            assert caught.value.timeout == 0.3
            assert "0.3 s" in str(caught.value)
            await wait_for(seen, "cancelled")  # notifications/cancelled reached the handler
            # a longer limit for one call
            result = await client.call_tool("slow", {"seconds": 0.5}, timeout=10)
            assert result.content[0].text == "slept 0.5"
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("slow", {"seconds": 30}, timeout=0.1)

    run(main())


def test_a_modern_http_timeout_closes_the_stream_and_the_handler_stops() -> None:
    seen: dict[str, Any] = {}
    with serve(build(seen).asgi_app()) as (url, _):

        async def main() -> None:
            async with Client.http(url, era="modern", timeout=0.5) as client:
                with pytest.raises(RequestTimeoutError):
                    await client.call_tool("slow", {"seconds": 30})
                await wait_for(seen, "cancelled")

        run(main())


class Counter:
    """A middleware object: its `on_request` is the hook (the server `Middleware` shape)."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def on_request(self, request: ClientRequest, call_next: ClientCallNext) -> Any:
        self.methods.append(request.method)
        return await call_next(request)


def test_middleware_runs_in_order_around_every_request() -> None:
    calls: list[str] = []

    async def outer(request: ClientRequest, call_next: ClientCallNext) -> Any:
        calls.append(f"outer> {request.method}")
        result = await call_next(request)
        calls.append(f"outer< {request.method}")
        return result

    async def inner(request: ClientRequest, call_next: ClientCallNext) -> Any:
        calls.append(f"inner> {request.method}")
        if request.method == "tools/call" and request.params:
            arguments = {**request.params["arguments"], "text": "changed"}
            request = msgspec.structs.replace(
                request, params={**request.params, "arguments": arguments}
            )
        result = await call_next(request)
        calls.append(f"inner< {request.method}")
        return result

    async def canned(request: ClientRequest, call_next: ClientCallNext) -> Any:
        if request.method == "prompts/list":  # answered here, never sent
            return t.ListPromptsResult(
                prompts=[t.Prompt(name="canned")], ttl_ms=0, cache_scope="private"
            )
        return await call_next(request)

    async def main() -> None:
        async with Client.memory(build({}), middleware=[outer, inner]) as client:
            result = await client.call_tool("echo", {"text": "original"})
            assert result.content[0].text == "changed"
            assert calls == [
                "outer> tools/call",
                "inner> tools/call",
                "inner< tools/call",
                "outer< tools/call",
            ]
            calls.clear()
            await client.list_tools(refresh=True)
            assert calls[0] == "outer> tools/list"
            client.add_middleware(canned)
            assert [p.name for p in await client.list_prompts(refresh=True)] == ["canned"]
        # a middleware added to a client that had none; an object with `on_request`
        counter = Counter()
        async with Client.memory(build({})) as client:
            client.add_middleware(canned)
            client.add_middleware(counter)
            assert [p.name for p in await client.list_prompts()] == ["canned"]
            await client.list_tools()
        assert counter.methods == ["tools/list"]  # prompts/list never got past `canned`

    run(main())


def test_a_middleware_sees_timeouts_and_errors() -> None:
    seen: list[str] = []

    async def record(request: ClientRequest, call_next: ClientCallNext) -> Any:
        try:
            return await call_next(request)
        except Exception as exc:
            seen.append(f"{request.method}: {type(exc).__name__} after {request.timeout}")
            raise

    async def main() -> None:
        async with Client.memory(build({}), middleware=[record]) as client:
            with pytest.raises(RequestTimeoutError):
                await client.call_tool("slow", {"seconds": 30}, timeout=0.2)
            assert seen == ["tools/call: RequestTimeoutError after 0.2"]

    run(main())


class Flaky:
    """An ASGI app in front of the real one: the first `failures` POSTs whose body
    holds `method` get a 503."""

    def __init__(self, app: Any, method: str, failures: int) -> None:
        self.app, self.method, self.left = app, method, failures
        self.seen = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive, 1 << 20) or b"{}"
        if json.loads(body).get("method") == self.method:
            self.seen += 1
            if self.left > 0:
                self.left -= 1
                await send({"type": "http.response.start", "status": 503, "headers": []})
                await send({"type": "http.response.body", "body": b"busy"})
                return
        replayed = False

        async def again() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, again, send)


@contextlib.contextmanager
def serve_flaky(app: Flaky) -> Iterator[str]:
    config = uvicorn.Config(app, "127.0.0.1", 0, log_level="warning", loop="asyncio")
    with running(uvicorn.Server(config)) as base:
        yield f"{base}/mcp"


FAST = RetryPolicy(attempts=3, backoff=0.01, jitter=0.0)


def test_idempotent_requests_are_retried_after_transport_failures() -> None:
    app = Flaky(build({}).asgi_app(), "tools/list", failures=2)
    with serve_flaky(app) as url:

        async def main() -> None:
            async with Client.http(url, era="modern", retry=FAST, timeout=10) as client:
                assert sorted(x.name for x in await client.list_tools()) == ["echo", "slow"]
            assert app.seen == 3
            app.left, app.seen = 3, 0  # more failures than attempts: the last one raises
            async with Client.http(url, era="modern", retry=FAST, timeout=10) as client:
                with pytest.raises(HttpStatusError) as caught:
                    await client.list_tools()
                assert caught.value.status == 503
            assert app.seen == 3
            app.left, app.seen = 1, 0  # without a policy: no retry
            async with Client.http(url, era="modern", timeout=10) as client:
                with pytest.raises(HttpStatusError):
                    await client.list_tools()
            assert app.seen == 1

        run(main())


def test_tool_calls_are_never_retried_and_connecting_is() -> None:
    app = Flaky(build({}).asgi_app(), "tools/call", failures=1)
    with serve_flaky(app) as url:

        async def main() -> None:
            async with Client.http(url, era="modern", retry=FAST, timeout=10) as client:
                with pytest.raises(HttpStatusError):
                    await client.call_tool("echo", {"text": "x"})
            assert app.seen == 1

        run(main())

    probe = Flaky(build({}).asgi_app(), "initialize", failures=2)
    with serve_flaky(probe) as url:

        async def connect() -> None:
            async with Client.http(url, era="legacy", retry=FAST, timeout=10) as client:
                assert (await client.call_tool("echo", {"text": "up"})).content[0].text == "up"
            assert probe.seen == 3

        run(connect())


def test_retry_policy_rules() -> None:
    policy = RetryPolicy(backoff=1.0, multiplier=2.0, max_delay=3.0, jitter=0.0)
    assert [policy.delay(n) for n in (1, 2, 3, 4)] == [1.0, 2.0, 3.0, 3.0]
    assert policy.retries("tools/list", HttpStatusError("x", 503))
    assert not policy.retries("tools/list", HttpStatusError("x", 400))
    assert not policy.retries("tools/call", HttpStatusError("x", 503))
    assert not policy.retries("tools/list", RequestTimeoutError(1.0))
    assert RetryPolicy(timeouts=True).retries("tools/list", RequestTimeoutError(1.0))
    with pytest.raises(ConfigurationError):
        RetryPolicy(attempts=0)


def test_every_request_method_takes_its_own_timeout() -> None:
    server = Server("slow reads")

    @server.resource("slow://doc")
    async def doc() -> str:
        await asyncio.sleep(30)
        return "late"

    @server.prompt
    async def brief() -> str:
        await asyncio.sleep(30)
        return "late"

    @server.completion(prompt="brief")
    def nothing(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return []

    async def main() -> None:
        async with Client.memory(server, timeout=30) as client:
            assert [r.uri for r in await client.list_resources(timeout=5)] == ["slow://doc"]
            with pytest.raises(RequestTimeoutError):
                await client.read_resource("slow://doc", timeout=0.2)
            with pytest.raises(RequestTimeoutError):
                await client.get_prompt("brief", timeout=0.2)
            ref = {"type": "ref/prompt", "name": "brief"}
            done = await client.complete(ref, "x", "", timeout=5)
            assert done.completion.values == []

    run(main())
