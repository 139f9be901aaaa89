"""Our client (`mcpgen.Client`) against servers we did not write.

(a) `official_server.py`, built on the official Python SDK (PyPI `mcp`, pinned in
    tests/tooling.py and run under its own interpreter), over stdio and Streamable HTTP,
    with the client's era `legacy` (the initialize handshake, 2025-11-25), `modern`
    (2026-07-28 pinned: no probe, no handshake) and `auto` (a `server/discover` probe;
    the SDK serves 2026-07-28, so the modern era must win). Each case lists tools, calls
    `echo`, reads `demo://hello`, gets the prompt `greet`, completes its argument and
    completes one input round answered by our `on_elicitation` callback: a real
    server-to-client `elicitation/create` request on a legacy connection, an
    input-required result (MRTR) that the client fulfils and retries on a modern one.

    The same server over the deprecated HTTP+SSE transport (2024-11-05), reached
    explicitly (an SSE link, era legacy) and by era detection from its URL (`auto`: the
    probe and the initialize POST are refused with 405, the client opens the stream),
    runs the legacy checks.

(b) `@modelcontextprotocol/server-everything` (npm, built on the TypeScript SDK 1.x,
    which knows only the initialize handshake) over stdio with `era="auto"`: the probe
    must be seen as "not modern" and the client must fall back to `initialize`.

Every frame crossing the client's link is recorded (`Wire`), so the assertions check
the wire as well as the typed results.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, HttpStatusError, TransportError
from mcpgen.transports._links import HttpLink, StdioLink
from mcpgen.transports._sse_link import SseLink
from mcpgen.types import ElicitResult
from tests import tooling
from tests.processes import LOOPBACK_ONLY, http_server

HERE = Path(__file__).resolve().parent
OFFICIAL_SERVER = HERE / "official_server.py"
# Pinned exact version (the newest published when this test was written).
SERVER_EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = ("legacy", "modern", "auto")
TRANSPORTS = ("stdio", "http")

OFFICIAL_INFO = {"name": "official-interop", "version": "2.3.0-test"}
QUESTION = "What is your name?"
ANSWER = {"name": "Alice"}

SCENARIO_TIMEOUT = 120.0  # one whole case, connection and shutdown included
REQUEST_TIMEOUT = 30.0  # one request
SERVER_START_TIMEOUT = 30.0

Json = dict[str, Any]


# -- the wire tap -------------------------------------------------------------------------------
@dataclass
class Frame:
    direction: str  # "send" (client to server) or "recv"
    at: float  # time.monotonic() when it crossed the link
    message: Json
    headers: dict[str, str] = field(default_factory=dict)  # the HTTP headers the client set


@dataclass
class Wire:
    frames: list[Frame] = field(default_factory=list)
    failures: dict[Any, TransportError] = field(default_factory=dict)  # request id -> failure

    def record(self, direction: str, frame: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            message = json.loads(frame)
        except ValueError:
            message = {"unparsed": frame.decode(errors="replace")}
        self.frames.append(
            Frame(
                direction,
                time.monotonic(),
                message,
                {k.lower(): v for k, v in (headers or {}).items()},
            )
        )

    def requests_sent(self) -> list[Frame]:
        return [f for f in self.frames if f.direction == "send" and _is_request(f.message)]

    def requests_received(self) -> list[Frame]:
        return [f for f in self.frames if f.direction == "recv" and _is_request(f.message)]

    def answer_to(self, request: Frame) -> Frame:
        """The response or error that came back for a request we sent."""
        rid = request.message["id"]
        for f in self.frames:
            if f.direction == "recv" and "method" not in f.message and f.message.get("id") == rid:
                return f
        raise AssertionError(f"no answer to {request.message}")

    def dump(self, limit: int = 40) -> str:
        return "\n".join(
            f"{f.direction} {json.dumps(f.message)[:600]} {f.headers or ''}"
            for f in self.frames[-limit:]
        )


def _is_request(message: Json) -> bool:
    return "method" in message and "id" in message


class _Tapped:
    """Mixed into a link class: records every frame, in and out, then passes it on."""

    wire: Wire
    http: bool
    _deliver: Callable[[bytes, int | None, Any], None]
    _fail: Callable[[Any, TransportError], None]

    @property
    def on_message(self) -> Callable[[bytes, int | None, Any], None]:
        return self._tap

    @on_message.setter
    def on_message(self, callback: Callable[[bytes, int | None, Any], None]) -> None:
        self._deliver = callback  # the client installs its pump here

    def _tap(self, frame: bytes, status: int | None, request_id: Any) -> None:
        self.wire.record("recv", frame)
        self._deliver(frame, status, request_id)

    @property
    def on_failure(self) -> Callable[[Any, TransportError], None]:
        return self._tap_failure

    @on_failure.setter
    def on_failure(self, callback: Callable[[Any, TransportError], None]) -> None:
        self._fail = callback

    def _tap_failure(self, request_id: Any, error: TransportError) -> None:
        self.wire.failures[request_id] = error
        self._fail(request_id, error)

    async def send(
        self, frame: bytes, headers: dict[str, str] | None = None, request_id: Any = None
    ) -> None:
        self.wire.record("send", frame, headers if self.http else None)
        await super().send(frame, headers, request_id)  # type: ignore[misc]


class TappedStdioLink(_Tapped, StdioLink):
    def __init__(self, wire: Wire, command: list[str]) -> None:
        super().__init__(command)
        self.wire = wire


class TappedHttpLink(_Tapped, HttpLink):
    def __init__(self, wire: Wire, url: str, sse_wire: Wire | None = None) -> None:
        super().__init__(url, timeout=REQUEST_TIMEOUT)
        self.wire = wire
        self.sse_wire = sse_wire or wire

    def legacy_sse(self) -> SseLink:  # era detection's last step: tap that link too
        link = TappedSseLink(self.sse_wire, self.url, self._client)
        link.owns_client = False
        return link


class TappedSseLink(_Tapped, SseLink):
    def __init__(self, wire: Wire, url: str, client: Any = None) -> None:
        super().__init__(url, client=client, timeout=REQUEST_TIMEOUT)
        self.wire = wire


# -- our side of an input round ----------------------------------------------------------------
@dataclass
class Elicitations:
    """Our `on_elicitation` callback: records what was asked, answers `answer`."""

    answer: Json
    asked: list[Json] = field(default_factory=list)

    async def __call__(self, params: Any) -> ElicitResult:
        schema = getattr(params, "requested_schema", None)
        properties = getattr(schema, "properties", None) or {}
        self.asked.append({"message": params.message, "properties": sorted(properties)})
        return ElicitResult(action="accept", content=dict(self.answer))


# -- processes ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def official_python() -> str:
    """The interpreter of the cached venv holding the official SDK (skips without it)."""
    return tooling.official_python()


def _official_http(python: str, log: Path) -> contextlib.AbstractContextManager[str]:
    """The official server over Streamable HTTP on a free loopback port."""
    return http_server(lambda port: [python, str(OFFICIAL_SERVER), "http", str(port)], log)


def _official_sse(python: str, log: Path) -> contextlib.AbstractContextManager[str]:
    """The official server over the deprecated HTTP+SSE transport; yields its SSE URL."""
    return http_server(lambda port: [python, str(OFFICIAL_SERVER), "sse", str(port)], log, "/sse")


def _official_stdio(python: str) -> list[str]:
    # The client caches its era verdict per endpoint (per stdio command line) for the
    # life of the process; a unique label keeps each case's verdict its own.
    return [python, str(OFFICIAL_SERVER), "stdio", uuid.uuid4().hex]


def _run(scenario: Awaitable[None], wire: Wire, log: Path | None = None) -> None:
    """Run one scenario under a bound; on failure, show the wire (and the server log)."""

    async def bounded() -> None:
        await asyncio.wait_for(scenario, SCENARIO_TIMEOUT)

    try:
        asyncio.run(bounded())
    except BaseException as exc:
        server_log = log.read_text()[-3000:] if log is not None and log.exists() else ""
        exc.add_note(f"wire (last frames):\n{wire.dump()}\nserver log:\n{server_log}")
        raise


def _texts(blocks: Any) -> list[str]:
    return [b.text for b in blocks if hasattr(b, "text")]


# -- (a) the official Python SDK's server --------------------------------------------------------
async def _official_scenario(client: Client, era: str, wire: Wire, asked: Elicitations) -> None:
    async with client:
        if era == "legacy":
            assert (client.era, client.protocol_version) == ("legacy", LEGACY)
            assert client.server_info == OFFICIAL_INFO
        else:
            assert (client.era, client.protocol_version) == ("modern", MODERN)
            if era == "auto":  # the discover result names the server
                assert client.server_info == OFFICIAL_INFO

        tools = {tool.name for tool in await client.list_tools()}
        assert {"echo", "ask_name"} <= tools, tools

        echoed = await client.call_tool("echo", {"text": "hi there"})
        assert not echoed.is_error and _texts(echoed.content) == ["hi there"]

        read = await client.read_resource("demo://hello")
        assert [(c.uri, c.text) for c in read.contents] == [("demo://hello", "hello")]

        prompt = await client.get_prompt("greet", {"name": "Bob"})
        assert [m.role for m in prompt.messages] == ["user"]
        assert _texts(m.content for m in prompt.messages) == ["Please greet Bob warmly."]

        completed = await client.complete({"type": "ref/prompt", "name": "greet"}, "name", "Al")
        assert completed.completion.values == ["Alice", "Albert"]

        greeted = await client.call_tool("ask_name", {})
        assert not greeted.is_error and _texts(greeted.content) == ["Hello, Alice!"]
        assert asked.asked == [{"message": QUESTION, "properties": ["name"]}]

    sent = wire.requests_sent()
    methods = [f.message["method"] for f in sent]
    if era == "legacy":
        assert methods[0] == "initialize" and "server/discover" not in methods, methods
        _check_legacy_wire(wire, client.link.http)
    else:
        assert "initialize" not in methods, methods
        if era == "auto":
            assert methods[0] == "server/discover", methods
            discovered = wire.answer_to(sent[0]).message
            assert MODERN in discovered["result"]["supportedVersions"], discovered
        else:
            assert "server/discover" not in methods, methods  # pinned: no probe
        _check_modern_wire(wire, client.link.http)


def _check_legacy_wire(wire: Wire, http: bool) -> None:
    """A real server-to-client elicitation/create inside the tools/call, answered by us."""
    initialize = wire.requests_sent()[0]
    assert initialize.message["params"]["protocolVersion"] == LEGACY
    assert "elicitation" in initialize.message["params"]["capabilities"]
    asks = wire.requests_received()
    assert [f.message["method"] for f in asks] == ["elicitation/create"], asks
    replies = [
        f.message
        for f in wire.frames
        if f.direction == "send"
        and "method" not in f.message
        and f.message.get("id") == asks[0].message["id"]
    ]
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": asks[0].message["id"],
            "result": {"action": "accept", "content": ANSWER},
        }
    ], replies
    for f in wire.requests_sent()[1:]:
        assert "io.modelcontextprotocol/protocolVersion" not in (f.message.get("params") or {}).get(
            "_meta", {}
        ), f.message
        if http:  # the negotiated version rides on every later request
            assert f.headers.get("mcp-protocol-version") == LEGACY, f.headers


def _check_modern_wire(wire: Wire, http: bool) -> None:
    """Stateless 2026-07-28: the version on every request, input as an MRTR round."""
    sent = wire.requests_sent()
    for f in sent:
        meta = f.message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN, f.message
        if http:
            assert f.headers.get("mcp-protocol-version") == MODERN, f.headers
            assert f.headers.get("mcp-method") == f.message["method"], f.headers
    assert not wire.requests_received()  # no server-to-client request on a modern connection

    calls = [f for f in sent if f.message["params"].get("name") == "ask_name"]
    assert len(calls) == 2, [f.message for f in calls]
    first, retry = calls
    asked = wire.answer_to(first).message["result"]
    assert asked["resultType"] == "input_required", asked
    [(key, request)] = asked["inputRequests"].items()
    assert request["method"] == "elicitation/create" and request["params"]["message"] == QUESTION
    assert "inputResponses" not in first.message["params"]
    assert retry.message["params"]["inputResponses"] == {
        key: {"action": "accept", "content": ANSWER}
    }, retry.message
    assert retry.message["params"]["requestState"] == asked["requestState"]
    assert retry.message["params"]["arguments"] == first.message["params"]["arguments"]
    if http:
        assert retry.headers.get("mcp-name") == "ask_name", retry.headers
    assert wire.answer_to(retry).message["result"]["resultType"] == "complete"


@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_official_python_server(
    transport: str, era: str, official_python: str, tmp_path: Path
) -> None:
    wire = Wire()
    asked = Elicitations(ANSWER)
    log = tmp_path / "server.log"
    with contextlib.ExitStack() as stack:
        if transport == "http":
            url = stack.enter_context(_official_http(official_python, log))
            link: StdioLink | HttpLink = TappedHttpLink(wire, url)
        else:
            link = TappedStdioLink(wire, _official_stdio(official_python))
        client = Client(link, era=era, on_elicitation=asked, timeout=REQUEST_TIMEOUT)
        _run(_official_scenario(client, era, wire, asked), wire, log)


@pytest.mark.slow
@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_official_python_server_over_http_sse(
    era: str, official_python: str, tmp_path: Path
) -> None:
    """The deprecated HTTP+SSE transport: an SSE link (explicit), or era detection from
    the URL ending on it; either way the legacy checks hold on the stream's wire."""
    http_wire, wire = Wire(), Wire()
    asked = Elicitations(ANSWER)
    log = tmp_path / "server.log"
    with _official_sse(official_python, log) as url:
        link: SseLink | HttpLink = (
            TappedSseLink(wire, url) if era == "legacy" else TappedHttpLink(http_wire, url, wire)
        )
        client = Client(link, era=era, on_elicitation=asked, timeout=REQUEST_TIMEOUT)
        _run(_official_scenario(client, "legacy", wire, asked), wire, log)
    assert isinstance(client.link, SseLink)
    if era == "auto":  # both POSTs to the SSE URL refused (405, no JSON-RPC body)
        sent = [f.message["method"] for f in http_wire.requests_sent()]
        assert sent == ["server/discover", "initialize"], http_wire.dump()
        assert not [f for f in http_wire.frames if f.direction == "recv"], http_wire.dump()
        for request in http_wire.requests_sent():
            failure = http_wire.failures[request.message["id"]]
            assert isinstance(failure, HttpStatusError), failure
            assert (failure.status, failure.body) == (405, "Method Not Allowed"), failure
    else:
        assert not http_wire.frames


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_pinned_legacy_session_does_not_decide_auto(
    transport: str, official_python: str, tmp_path: Path
) -> None:
    """An explicit `era="legacy"` is the caller's choice, not an observation of the
    server: a later `era="auto"` client of the same endpoint in the same process must
    still probe, and pick 2026-07-28 from this dual-era server."""
    wire = Wire()
    log = tmp_path / "server.log"
    with contextlib.ExitStack() as stack:
        url = (
            stack.enter_context(_official_http(official_python, log)) if transport == "http" else ""
        )
        command = _official_stdio(official_python)  # one command line for both clients

        def make(era: str) -> Client:
            link = TappedHttpLink(wire, url) if url else TappedStdioLink(wire, command)
            return Client(link, era=era, timeout=REQUEST_TIMEOUT)

        async def scenario() -> None:
            async with make("legacy") as pinned:
                assert pinned.era == "legacy"
            first_auto_frame = len(wire.frames)
            async with make("auto") as auto:
                methods = [
                    f.message.get("method")
                    for f in wire.frames[first_auto_frame:]
                    if f.direction == "send"
                ]
                assert (auto.era, auto.protocol_version) == ("modern", MODERN), (
                    f"era={auto.era!r} version={auto.protocol_version!r}; "
                    f"the auto client sent {methods} (no server/discover probe)"
                )

        _run(scenario(), wire, log)


# -- (b) the legacy-only reference server from npm -----------------------------------------------
@pytest.fixture(scope="module")
def server_everything() -> list[str]:
    """The command running server-everything over stdio (its bin, with `stdio`)."""
    node = tooling.node22()
    package = tooling.npm_package(SERVER_EVERYTHING) / "@modelcontextprotocol" / "server-everything"
    manifest = json.loads((package / "package.json").read_text())
    bin_entry = manifest["bin"]
    entry = bin_entry if isinstance(bin_entry, str) else bin_entry["mcp-server-everything"]
    return [node, str(package / entry), "stdio"]


async def _everything_checks(client: Client, asked: Elicitations) -> None:
    """One legacy session with server-everything: tools, resources, prompts and a real
    server-to-client elicitation/create answered by our callback."""
    async with client:
        assert (client.era, client.protocol_version) == ("legacy", LEGACY)
        assert client.server_info is not None
        assert client.server_info.get("name") == "mcp-servers/everything", client.server_info

        tools = {tool.name for tool in await client.list_tools()}
        assert "echo" in tools, tools
        echoed = await client.call_tool("echo", {"message": "hi there"})
        assert not echoed.is_error and _texts(echoed.content) == ["Echo: hi there"]

        listed = await client.list_resources()
        assert listed, "server-everything lists its static documents"
        document = await client.read_resource(listed[0].uri)
        assert [c.uri for c in document.contents] == [listed[0].uri]
        assert all(c.text for c in document.contents)
        dynamic = await client.read_resource("demo://resource/dynamic/text/1")
        [content] = dynamic.contents
        assert content.text.startswith("Resource 1: This is a plaintext resource"), content

        prompts = {p.name for p in await client.list_prompts()}
        assert {"simple-prompt", "args-prompt"} <= prompts, prompts
        prompt = await client.get_prompt("args-prompt", {"city": "Paris"})
        assert _texts(m.content for m in prompt.messages) == ["What's weather in Paris?"]

        # A legacy input round: a real server-to-client elicitation/create.
        tools = {tool.name for tool in await client.list_tools(refresh=True)}
        assert "trigger-elicitation-request" in tools, tools
        result = await client.call_tool("trigger-elicitation-request", {})
        assert not result.is_error
        assert any("- Name: Alice" in text for text in _texts(result.content)), result
        assert [a["message"] for a in asked.asked] == [
            "Please provide inputs for the following fields:"
        ]


@pytest.mark.slow
@pytest.mark.needs_node
def test_server_everything_auto_falls_back(server_everything: list[str]) -> None:
    wire = Wire()
    asked = Elicitations(ANSWER)
    # A long probe timeout: if the fallback waited for it instead of reacting to the
    # server's answer, the check on the timing below would catch it.
    probe_timeout = 30.0
    client = Client(
        TappedStdioLink(wire, server_everything),
        era="auto",
        on_elicitation=asked,
        timeout=REQUEST_TIMEOUT,
        probe_timeout=probe_timeout,
    )

    _run(_everything_checks(client, asked), wire)

    sent = wire.requests_sent()
    assert [f.message["method"] for f in sent[:2]] == ["server/discover", "initialize"], sent[:2]
    probe, initialize = sent[:2]
    answer = wire.answer_to(probe)
    # server-everything answers the probe at once with a JSON-RPC error (it is not
    # initialized, and knows no server/discover); the client falls back on that answer,
    # without waiting out its probe timeout.
    assert answer.message["error"]["code"] == -32601, answer.message
    assert answer.at <= initialize.at < answer.at + 2.0, (answer.at, initialize.at)
    assert initialize.at - probe.at < probe_timeout / 2
    assert initialize.message["params"]["protocolVersion"] == LEGACY
    assert [f.message["method"] for f in wire.requests_received()] == ["elicitation/create"]


@pytest.mark.slow
@pytest.mark.needs_node
@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_server_everything_over_http_sse(
    era: str, server_everything: list[str], tmp_path: Path
) -> None:
    """server-everything's `sse` mode (the TypeScript SDK's SSEServerTransport), reached
    with an SSE link (explicit) or by era detection from its URL: a POST to /sse is an
    Express 404 page, so the client walks down to the stream."""
    node, entry = server_everything[:2]
    preload = tmp_path / "loopback.cjs"
    preload.write_text(LOOPBACK_ONLY)
    log = tmp_path / "server.log"
    http_wire, wire = Wire(), Wire()
    asked = Elicitations(ANSWER)

    def command(port: int) -> list[str]:
        return ["env", f"PORT={port}", node, "--require", str(preload), entry, "sse"]

    with http_server(command, log, "/sse") as url:
        link: SseLink | HttpLink = (
            TappedSseLink(wire, url) if era == "legacy" else TappedHttpLink(http_wire, url, wire)
        )
        client = Client(link, era=era, on_elicitation=asked, timeout=REQUEST_TIMEOUT)
        _run(_everything_checks(client, asked), wire, log)
    assert isinstance(client.link, SseLink)
    assert client.link.endpoint is not None and "/message?sessionId=" in client.link.endpoint
    sent = [f.message["method"] for f in wire.requests_sent()]
    assert sent[0] == "initialize" and "server/discover" not in sent, sent
    assert [f.message["method"] for f in wire.requests_received()] == ["elicitation/create"]
    if era == "auto":
        probed = [f.message["method"] for f in http_wire.requests_sent()]
        assert probed == ["server/discover", "initialize"], http_wire.dump()
        assert not [f for f in http_wire.frames if f.direction == "recv"], http_wire.dump()
        for request in http_wire.requests_sent():
            failure = http_wire.failures[request.message["id"]]
            assert isinstance(failure, HttpStatusError), failure
            assert failure.status == 404 and "Cannot POST /sse" in failure.body, failure
