"""Dispatch benchmark: one JSON-RPC request line in, its reply line out, in process.

What it measures: the server-side cost of handling one MCP request, from the bytes of
the request line to the JSON text of the reply, with no OS I/O, for mcpgen and for the
official MCP Python SDK's low-level server, in the same process and the same run.
Both servers expose the same 100 tools (``echo``, ``tool_002`` .. ``tool_099`` and
``add``), so ``tools/list`` answers 100 tools in one page.

Workloads:

1. ``tools/call`` of ``echo`` and ``tools/list``, 2026-07-28 era: each request carries
   the per-request ``_meta`` envelope (protocol version, client capabilities).
2. The same two on a legacy session (``initialize`` with 2025-11-25, then
   ``notifications/initialized``, once, before timing; the requests carry no
   ``_meta``).
3. Informational rows, ``tools/call`` 2026-07-28: the official server with its
   default OpenTelemetry middleware removed, and the official in-process route that
   skips JSON-RPC framing altogether (a lower bound for the official cost).

Ours: ``Session.receive(line, channel)`` of ``mcpgen``'s sans-I/O core with a tool
registered as a typed function; it parses the line, validates the request and the
tool's arguments, runs the (sync) handler and returns the encoded reply line.

Official: ``mcp.server.lowlevel.Server`` with ``on_list_tools`` / ``on_call_tool``
handlers, run by ``Server.run`` (its dual-era loop) over the SDK's in-memory
transport (``mcp.shared.memory.create_client_server_memory_streams``).  The benchmark
plays the transport's part: it parses the line with the SDK's
``jsonrpc_message_adapter`` (what the stdio transport does), sends the
``SessionMessage`` into the server's read stream, awaits the reply ``SessionMessage``
on the write stream and dumps it with ``model_dump_json(by_alias=True,
exclude_unset=True)`` (what the stdio transport writes).  The SDK's dispatcher runs
each request in a task of its own, so a read loop is always running and one
operation is a closed-loop request -> reply round trip (one request in flight).

Before timing, every reply is decoded and checked (the echoed text, the 100 tools and
their definitions, identical on both sides); the script stops if one is wrong.

Method: per row, both sides are warmed up, then timed in repeats
(``time.perf_counter_ns`` around a loop of N operations, N calibrated to a fixed time
per sample, garbage collector off while timing unless ``--gc``).  Each repeat times
every row in turn, the two sides of a row back to back (alternating which goes
first), so that machine noise and drift hit both sides and all rows alike.  Reported: the median
microseconds per operation and operations per second of each side, the ratio of the
medians (official / ours) and the median and quartiles of the per-repeat ratios.

Usage (the official SDK must not enter the project's environment, so use the wrapper,
which makes a separate venv)::

    bench/run.sh bench/dispatch.py                # ~60 s
    bench/run.sh bench/dispatch.py --quick        # ~12 s
    bench/run.sh bench/dispatch.py --write-doc    # also rewrite the dispatch section
                                                  # of docs/performance.md
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio

from mcpgen import Channel
from mcpgen import Server as OurServer

try:
    import mcp_types
    from mcp.server.lowlevel import Server as OfficialServer
    from mcp.server.runner import modern_on_request
    from mcp.shared.direct_dispatcher import create_direct_dispatcher_pair
    from mcp.shared.exceptions import MCPError
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise SystemExit(
        f"bench/dispatch.py needs the official MCP SDK ({exc}); run it through "
        "bench/run.sh bench/dispatch.py, which installs it into a separate venv."
    ) from exc

import _common
from _common import (
    INITIALIZED,
    LEGACY_VERSION,
    MODERN_META,
    MODERN_VERSION,
    Compare,
    Settings,
    collector,
    compact,
    result_of,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from official_lowlevel import make_server

SECTION_START, SECTION_END = _common.markers("dispatch")
TARGET_RATIO: Final = 15.0
N_TOOLS: Final = 100
ECHO_TEXT: Final = "hello"

OursOp = Callable[[bytes], Any]
OfficialOp = Callable[[bytes], Awaitable[Any]]


# --------------------------------------------------------------------------- request lines


CALL_PARAMS: Final = {"name": "echo", "arguments": {"text": ECHO_TEXT}}

MODERN_CALL: Final = compact(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {**CALL_PARAMS, "_meta": MODERN_META},
    }
)
MODERN_LIST: Final = compact(
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}}
)
LEGACY_INITIALIZE: Final = compact(_common.initialize(LEGACY_VERSION, "b"))
LEGACY_INITIALIZED: Final = compact(INITIALIZED)
LEGACY_CALL: Final = compact(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL_PARAMS}
)
LEGACY_LIST: Final = compact({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})


# ------------------------------------------------------------------------------ our side


class NullChannel(Channel):
    """A channel that drops notifications and refuses detached work."""

    def notify(self, frame: bytes) -> None:
        pass

    def spawn(self, coro: Any) -> None:
        raise RuntimeError("the benchmark's handlers never spawn work")


def _lookup_tool(index: int) -> Callable[..., str]:
    def lookup(query: str, limit: int = 10) -> str:
        return query

    lookup.__name__ = f"tool_{index:03d}"
    return lookup


def build_ours() -> OurServer:
    """mcpgen's server: 100 typed tools (``echo``, ``tool_002`` .. ``tool_099``, ``add``)."""
    server = OurServer("bench", "1.0")

    @server.tool
    def echo(text: str) -> str:
        return text

    for i in range(2, N_TOOLS):
        server.add_tool(
            _lookup_tool(i),
            description=f"Tool {i}: looks something up and returns at most `limit` matches.",
        )

    @server.tool
    def add(a: float, b: float) -> float:
        return a + b

    return server


class OurConnection:
    """One mcpgen session; ``receive`` answers a sync request with the reply bytes."""

    def __init__(self, server: OurServer, *, legacy: bool) -> None:
        self.channel = NullChannel()
        self.session = server.session(self.channel)
        if legacy:
            reply = self.session.receive(LEGACY_INITIALIZE, self.channel)
            _check_initialize(reply, "ours")
            if self.session.receive(LEGACY_INITIALIZED, self.channel) is not None:
                raise SystemExit("ours: notifications/initialized got a reply")

    def op(self) -> OursOp:
        receive, channel = self.session.receive, self.channel

        def round_trip(line: bytes) -> Any:
            return receive(line, channel)

        return round_trip


# ------------------------------------------------------------------------- official side


def build_official(tool_defs: list[dict[str, Any]], *, otel: bool = True) -> OfficialServer:
    """The official low-level server with the same tools as ours
    (``bench/servers/official_lowlevel.py``'s ``make_server``: ``echo`` returns the text,
    ``tool_NNN`` the query).

    The tool definitions are ours, as our ``tools/list`` returns them (name,
    description, inputSchema), validated into the SDK's ``Tool`` once.  ``otel=False``
    drops the SDK's default ``OpenTelemetryMiddleware`` from ``Server.middleware``.
    """
    tools = [mcp_types.Tool.model_validate(d, by_name=False) for d in tool_defs]
    modern_listing = mcp_types.ListToolsResult(tools=tools)
    # An `outputSchema` whose root is not an object (ours for `add -> float`) is valid
    # at 2026-07-28 only: the SDK's legacy result sieve rejects it, and mcpgen leaves
    # it out on a legacy session, so the handler does the same.
    legacy_listing = mcp_types.ListToolsResult(
        tools=[
            t
            if t.output_schema is None or t.output_schema.get("type") == "object"
            else t.model_copy(update={"output_schema": None})
            for t in tools
        ]
    )
    server = make_server(
        modern_listing,
        legacy_listing,
        version="1.0",
        lookup=lambda args: str(args.get("query", "")),
    )
    if not otel:
        server.middleware = [
            m for m in server.middleware if type(m).__name__ != "OpenTelemetryMiddleware"
        ]
    return server


class OfficialConnection:
    """``Server.run`` over the SDK's in-memory transport; the benchmark is the client.

    ``round_trip`` does what the stdio transport does around the server: parse the
    line into a ``SessionMessage``, hand it to the server's read stream, take the
    reply ``SessionMessage`` from its write stream and dump it to JSON text.
    """

    def __init__(self, read: Any, write: Any) -> None:
        self._read = read  # the client's read stream: server -> client
        self._write = write  # the client's write stream: client -> server

    @classmethod
    @asynccontextmanager
    async def open(
        cls, server: OfficialServer, *, legacy: bool
    ) -> AsyncIterator[OfficialConnection]:
        async with create_client_server_memory_streams() as (client_streams, server_streams):
            server_read, server_write = server_streams
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    server.run, server_read, server_write, server.create_initialization_options()
                )
                connection = cls(*client_streams)
                if legacy:
                    _check_initialize(await connection.round_trip(LEGACY_INITIALIZE), "official")
                    await connection.send_only(LEGACY_INITIALIZED)
                try:
                    yield connection
                finally:
                    await client_streams[1].aclose()  # EOF: the server's loop ends

    async def round_trip(self, line: bytes) -> str:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        await self._write.send(SessionMessage(message))
        reply = await self._read.receive()
        return reply.message.model_dump_json(by_alias=True, exclude_unset=True)

    async def send_only(self, line: bytes) -> None:
        message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        await self._write.send(SessionMessage(message))


@asynccontextmanager
async def official_direct(server: OfficialServer) -> AsyncIterator[OfficialOp]:
    """The SDK's own in-process modern route (what ``mcp.client.Client`` uses for an
    in-process ``Server``): a ``DirectDispatcher`` pair calling ``modern_on_request``,
    with no JSON-RPC framing and no streams.  The line is parsed with ``json.loads``
    and the reply written with ``json.dumps``, the cheapest framing there is."""

    async def no_request(dctx: Any, method: str, params: Any) -> dict[str, Any]:
        raise MCPError(code=mcp_types.METHOD_NOT_FOUND, message=method)

    async def no_notify(dctx: Any, method: str, params: Any) -> None:
        return None

    async with server.lifespan(server) as lifespan_state, anyio.create_task_group() as tg:
        client, server_side = create_direct_dispatcher_pair(raise_handler_exceptions=False)
        await tg.start(server_side.run, modern_on_request(server, lifespan_state), no_notify)
        await tg.start(client.run, no_request, no_notify)
        send = client.send_raw_request
        loads, dumps = json.loads, json.dumps

        async def round_trip(line: bytes) -> str:
            request = loads(line)
            rid = request["id"]
            result = await send(request["method"], request.get("params"), {"request_id": rid})
            return dumps({"jsonrpc": "2.0", "id": rid, "result": result}, separators=(",", ":"))

        try:
            yield round_trip
        finally:
            client.close()
            server_side.close()


# ---------------------------------------------------------------------------- checking


def _check_initialize(raw: bytes | str | None, who: str) -> None:
    if not isinstance(raw, bytes | str):
        raise SystemExit(f"{who}: initialize got no reply ({raw!r})")
    _common.check_initialize(raw, who)


def check_call(raw: bytes | str, who: str) -> None:
    _common.check_echo(raw, who, ECHO_TEXT)


def check_list(raw: bytes | str, who: str, expected: list[dict[str, Any]]) -> None:
    """100 tools in one page, defined exactly as in ``expected`` (ours, same era)."""
    result = result_of(raw, who, 2)
    tools = result.get("tools", [])
    if len(tools) != N_TOOLS or "nextCursor" in result:
        raise SystemExit(f"{who}: tools/list gave {len(tools)} tools, not {N_TOOLS} in one page")
    if _common.tool_projection(tools) != _common.tool_projection(expected):
        raise SystemExit(f"{who}: tools/list differs from mcpgen's tool definitions")


def check_same(ours: bytes | str, official: bytes | str, what: str) -> None:
    """Both replies carry the same result; the SDK also writes ``isError: false``."""
    ours_result = json.loads(ours)
    official_result = json.loads(official)
    if official_result.get("result", {}).get("isError") is False:
        del official_result["result"]["isError"]
    if json.dumps(ours_result, sort_keys=True) != json.dumps(official_result, sort_keys=True):
        raise SystemExit(f"{what}: the two replies differ:\n  {ours[:300]!r}\n  {official[:300]!r}")


# ------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One table row: a request line, our operation and the official one."""

    label: str
    era: str
    line: bytes
    ours: OursOp
    official: OfficialOp
    official_setup: str
    check: Callable[[bytes | str, str], None]
    target: bool = False
    informational: bool = False


# ---------------------------------------------------------------------------- timing


FULL: Final = Settings(repeats=21, sample_ns=200_000_000, warmup_ns=200_000_000)
QUICK: Final = Settings(repeats=7, sample_ns=70_000_000, warmup_ns=50_000_000)


def _ours_loop_ns(op: OursOp, line: bytes, n: int, settings: Settings) -> int:
    with collector(settings.gc_on):
        calls = range(n)
        start = time.perf_counter_ns()
        for _ in calls:
            op(line)
        return time.perf_counter_ns() - start


async def _official_loop_ns(op: OfficialOp, line: bytes, n: int, settings: Settings) -> int:
    with collector(settings.gc_on):
        calls = range(n)
        start = time.perf_counter_ns()
        for _ in calls:
            await op(line)
        return time.perf_counter_ns() - start


async def _calibrate(loop_ns: Callable[[int], Coroutine[Any, Any, int]], settings: Settings) -> int:
    """Warm up for ``warmup_ns``, then return the loop count that fills one sample."""
    deadline = time.perf_counter_ns() + settings.warmup_ns
    while time.perf_counter_ns() < deadline:
        await loop_ns(16)
    n = 1
    while True:
        elapsed = await loop_ns(n)
        if elapsed * 10 >= settings.sample_ns:
            return max(1, round(n * settings.sample_ns / elapsed))
        n *= 2


@dataclass(frozen=True)
class Row(Compare):
    """The measured numbers of one case (nanoseconds per operation, per repeat)."""

    case: Case
    reply_bytes: int


class _Timer:
    """The two timed loops of one case, with their calibrated loop counts."""

    def __init__(self, case: Case, settings: Settings) -> None:
        self.case, self.settings = case, settings
        self.n_ours = self.n_official = 1
        self.ours: list[float] = []
        self.official: list[float] = []

    async def ours_ns(self, n: int) -> int:
        return _ours_loop_ns(self.case.ours, self.case.line, n, self.settings)

    async def official_ns(self, n: int) -> int:
        return await _official_loop_ns(self.case.official, self.case.line, n, self.settings)

    async def calibrate(self) -> None:
        self.n_ours = await _calibrate(self.ours_ns, self.settings)
        self.n_official = await _calibrate(self.official_ns, self.settings)

    async def sample(self, ours_first: bool) -> None:
        """One repeat: both sides back to back."""
        for side in (True, False) if ours_first else (False, True):
            if side:
                self.ours.append(await self.ours_ns(self.n_ours) / self.n_ours)
            else:
                self.official.append(await self.official_ns(self.n_official) / self.n_official)

    def row(self) -> Row:
        size = len(self.case.ours(self.case.line))
        return Row(self.ours, self.official, TARGET_RATIO, self.case, reply_bytes=size)


async def measure(cases: list[Case], settings: Settings) -> list[Row]:
    """Warm up and calibrate every case, then time them ``settings.repeats`` times.

    Each repeat goes through all the cases in turn, and within a case runs the two
    sides back to back, alternating which goes first; so a change of the machine's
    speed during the run spreads over every row instead of skewing the later ones.
    """
    timers = [_Timer(case, settings) for case in cases]
    for timer in timers:
        print(f"warming up: {timer.case.label} ({timer.case.era})", file=sys.stderr, flush=True)
        await timer.calibrate()
    for repeat in range(settings.repeats):
        print(f"repeat {repeat + 1}/{settings.repeats}", file=sys.stderr, flush=True)
        for timer in timers:
            gc.collect()
            await timer.sample(ours_first=repeat % 2 == 0)
    return [timer.row() for timer in timers]


# ------------------------------------------------------------------------------- the run


async def run(settings: Settings) -> list[Row]:
    ours_server = build_ours()
    ours_modern = OurConnection(ours_server, legacy=False).op()
    ours_legacy = OurConnection(ours_server, legacy=True).op()

    # Our tool definitions as each era lists them: the official server gets the same.
    tool_defs: list[dict[str, Any]] = result_of(ours_modern(MODERN_LIST), "ours", 2)["tools"]
    legacy_defs: list[dict[str, Any]] = result_of(ours_legacy(LEGACY_LIST), "ours", 2)["tools"]
    if len(tool_defs) != N_TOOLS:
        raise SystemExit(f"ours: {len(tool_defs)} tools registered, not {N_TOOLS}")

    def lists(expected: list[dict[str, Any]]) -> Callable[[bytes | str, str], None]:
        return lambda raw, who: check_list(raw, who, expected)

    async with AsyncExitStack() as stack:
        default = build_official(tool_defs)
        modern = await stack.enter_async_context(OfficialConnection.open(default, legacy=False))
        legacy = await stack.enter_async_context(OfficialConnection.open(default, legacy=True))
        no_otel = build_official(tool_defs, otel=False)
        modern_no_otel = await stack.enter_async_context(
            OfficialConnection.open(no_otel, legacy=False)
        )
        direct = await stack.enter_async_context(official_direct(default))

        stream = "`Server.run` over the in-memory streams, SDK line parse + dump"
        cases = [
            Case(
                "tools/call echo",
                MODERN_VERSION,
                MODERN_CALL,
                ours_modern,
                modern.round_trip,
                stream,
                check_call,
                target=True,
            ),
            Case(
                f"tools/list, {N_TOOLS} tools",
                MODERN_VERSION,
                MODERN_LIST,
                ours_modern,
                modern.round_trip,
                stream,
                lists(tool_defs),
            ),
            Case(
                "tools/call echo",
                f"legacy {LEGACY_VERSION}",
                LEGACY_CALL,
                ours_legacy,
                legacy.round_trip,
                stream,
                check_call,
                target=True,
            ),
            Case(
                f"tools/list, {N_TOOLS} tools",
                f"legacy {LEGACY_VERSION}",
                LEGACY_LIST,
                ours_legacy,
                legacy.round_trip,
                stream,
                lists(legacy_defs),
            ),
            Case(
                "tools/call echo, official without OTel middleware",
                MODERN_VERSION,
                MODERN_CALL,
                ours_modern,
                modern_no_otel.round_trip,
                stream + ", `OpenTelemetryMiddleware` removed from `Server.middleware`",
                check_call,
                informational=True,
            ),
            Case(
                "tools/call echo, official without JSON-RPC framing (lower bound)",
                MODERN_VERSION,
                MODERN_CALL,
                ours_modern,
                direct,
                "`DirectDispatcher` + `modern_on_request`, stdlib `json` parse + dump",
                check_call,
                informational=True,
            ),
        ]
        for case in cases:  # every reply checked, on both sides, before any timing
            ours_reply = case.ours(case.line)
            official_reply = await case.official(case.line)
            case.check(ours_reply, f"ours / {case.label} / {case.era}")
            case.check(official_reply, f"official / {case.label} / {case.era}")
            check_same(ours_reply, official_reply, f"{case.label} / {case.era}")
        return await measure(cases, settings)


# ------------------------------------------------------------------------------ reports


@dataclass(frozen=True)
class Environment(_common.SdkEnvironment):
    """Where and with what the numbers were measured."""

    otel_sdk: str

    @classmethod
    def current(cls, argv: list[str]) -> Environment:
        return cls.collect(argv, "bench/dispatch.py", otel_sdk=_common.version("opentelemetry-sdk"))


def _verdict(row: Row) -> str:
    return row.verdict("" if row.case.target else "info")


def _cells(row: Row) -> tuple[str, ...]:
    return (
        row.case.label,
        row.case.era,
        f"{row.ours_median / 1e3:,.1f}",
        f"{1e9 / row.ours_median:,.0f}",
        f"{row.official_median / 1e3:,.1f}",
        f"{1e9 / row.official_median:,.0f}",
        f"{row.ratio:.1f}x",
        row.paired(1),
        _verdict(row),
    )


HEADER: Final = (
    "workload",
    "era",
    "ours µs/op",
    "ours ops/s",
    "official µs/op",
    "official ops/s",
    "ratio",
    "paired (IQR)",
    f"meets {TARGET_RATIO:g}x",
)


def format_console(rows: list[Row], env: Environment, settings: Settings) -> str:
    text = _common.columns(HEADER, [_cells(row) for row in rows], 2)
    text += [
        "",
        f"{env.machine}, {env.cpu}, {env.cores} cores; Python {env.python}; mcpgen "
        f"{env.mcpgen}; msgspec {env.msgspec}; mcp {env.mcp}; pydantic {env.pydantic}; "
        f"anyio {env.anyio}; OTel tracer provider {env.tracer_provider}",
        f"{settings.repeats} repeats, ~{settings.sample_ns / 1e9:.2f} s per sample, GC "
        f"{'on' if settings.gc_on else 'off'} while timing; ratio = official median / ours "
        "median; paired = median (IQR) of per-repeat ratios",
        *(_target_lines(rows)),
    ]
    return "\n".join(text)


def _target_lines(rows: list[Row]) -> list[str]:
    out = []
    for row in rows:
        if not row.case.target:
            continue
        q2 = row.paired_quartiles[1]
        met = "MET" if row.meets_target else "NOT MET"
        out.append(
            f"Target (official / ours >= {TARGET_RATIO:g} on {row.case.label}, "
            f"{row.case.era}): {met} - {row.ratio:.1f}x (paired {q2:.1f}x)"
        )
    return out


def format_section(rows: list[Row], env: Environment, settings: Settings) -> str:
    out = [
        SECTION_START,
        "## Dispatch: one request line to its reply line, mcpgen vs the official SDK",
        "",
        "Generated by `bench/dispatch.py`; do not edit by hand, re-run the command below.",
        "",
        f"- Date: {env.date} (UTC)",
        f"- Command: `{env.command}`",
        f"- Machine: `{env.machine}`, {env.cpu}, {env.cores} cores",
        f"- Python {env.python}, mcpgen {env.mcpgen}, msgspec {env.msgspec}; "
        f"mcp {env.mcp} (mcp-types {env.mcp_types}), pydantic {env.pydantic} "
        f"(pydantic-core {env.pydantic_core}), anyio {env.anyio} on asyncio, "
        f"opentelemetry-api {env.otel_api} (opentelemetry-sdk {env.otel_sdk}; tracer "
        f"provider `{env.tracer_provider}`)",
        f"- {settings.repeats} repeats, ~{settings.sample_ns / 1e9:.2f} s per sample per "
        "side; each repeat times every row in turn, the two sides of a row back to back "
        "(alternating which goes first), so drift in the machine's speed hits all rows "
        f"alike; garbage collector {'on' if settings.gc_on else 'off'} while timing; "
        "medians reported",
        "",
        "One operation = one JSON-RPC request line (bytes) in, its reply out as JSON text, "
        "in process, no OS I/O, one request in flight. Both servers expose the same "
        f"{N_TOOLS} tools (`echo`, `tool_002` .. `tool_099`, `add`; definitions checked "
        "identical), so `tools/list` returns all of them in one page. Ratio = official "
        "median / ours median; higher is better for mcpgen. Paired = median, and in "
        "brackets the quartiles, of the official/ours ratios of the single repeats. A row "
        "meets the target when both the ratio and the paired median do.",
        "",
        *_common.md_table(HEADER, [_cells(row) for row in rows], 2, last_left=True),
        "",
    ]
    out += [
        f"Project target: mcpgen at least {TARGET_RATIO:g}x faster than the official SDK "
        "on `tools/call` dispatch, both servers as shipped (OpenTelemetry middleware "
        "included), checked in both eras:",
        "",
    ]
    for row in rows:
        if row.case.target:
            q2 = row.paired_quartiles[1]
            met = "met" if row.meets_target else "**not met**"
            out.append(
                f"- {row.case.label}, {row.case.era}: {met}, {row.ratio:.1f}x (paired {q2:.1f}x)."
            )
    out += [
        "",
        "What each side runs:",
        "",
        "- Ours: `Session.receive(line, channel)` of mcpgen's sans-I/O core (one session "
        "per era; the legacy one got `initialize` and `notifications/initialized` first). "
        "It includes parsing the line (msgspec), classifying the era, validating the "
        "request params and the tool arguments against the typed signature, running the "
        "sync handler, building the result and encoding the reply line to `bytes`.",
    ]
    setups = dict.fromkeys(
        f"`{row.case.label}` ({row.case.era}): {row.case.official_setup}" for row in rows
    )
    out += [
        "- Official: `mcp.server.lowlevel.Server(on_list_tools=..., on_call_tool=...)`; "
        "`on_list_tools` returns a prebuilt `ListToolsResult`, `on_call_tool` looks the "
        "tool up in a dict and returns a `CallToolResult` (it checks `text` is a string; "
        "the low-level server validates the params model, not the tool arguments against "
        "the input schema). `Server.run` (its dual-era loop: the first request fixes the "
        "connection's era) serves one connection per era over "
        "`mcp.shared.memory.create_client_server_memory_streams`. The benchmark plays the "
        "transport: `jsonrpc_message_adapter.validate_json(line, by_name=False)` into a "
        "`SessionMessage`, `send` on the server's read stream, `receive` from its write "
        "stream, `message.model_dump_json(by_alias=True, exclude_unset=True)`, as the "
        "stdio transport does. Its dispatcher spawns a task per request (and `Server.run` "
        "relays each message through a replay stream), so its read loop runs all the time "
        "and the figure is a closed-loop request -> reply latency through the event loop. "
        "Per row:",
        *(f"  - {s}" for s in setups),
        "",
        "Notes:",
        "",
        "- Included on both sides: JSON parse of the request line, dispatch, handler, "
        "result construction and the JSON encoding of the reply. Excluded on both: OS "
        "I/O, line framing (reading up to the newline, writing the newline) and, for the "
        "official side, the stdio transport's own reader and writer tasks (their work is "
        "done inline by the benchmark, which saves it two task switches per message). "
        "The official reply is a `str` (no `.encode()` charged); ours is `bytes`.",
        "- OpenTelemetry: the official `Server` ships `OpenTelemetryMiddleware` in "
        "`Server.middleware` by default (a SERVER span per message; no-op until an "
        "exporter is installed). The main rows keep it, as shipped; here only the "
        "opentelemetry API is installed, so its tracer is the no-op proxy. The SDK's "
        'own comment documents the switch ("Drop it from this list to opt out"); the '
        "row without it shows what it costs. mcpgen has no tracing middleware.",
        "- The last row is the official in-process path that `mcp.client.Client` uses "
        "for an in-process server in the modern era: no JSON-RPC envelope validation, no "
        "streams, no per-request task. It is a lower bound for the official cost, not "
        "like-for-like: no transport of the SDK serves lines this way.",
        "- Same work on both sides: before timing, every reply is decoded and checked "
        "(the echoed text; 100 tools in one page with the same name, description, "
        "inputSchema and outputSchema as ours in that era), and the two replies must "
        "carry the same result, except that the SDK also writes `isError: false` on "
        "`tools/call` (16 bytes). The `tools/list` replies are the same size on both "
        f"sides ({_sizes(rows)}).",
        "- mcpgen encodes each list page once per registry snapshot (per method, "
        "revision and cursor) and serves the cached bytes; the official server dumps the "
        "handler's `ListToolsResult`, validates it again against the era's result model "
        "and dumps it again, on every request. Most of the `tools/list` ratio comes from "
        "that cache, not from the codec (see the codec section for that).",
        "- `tools/call` on a legacy session is the row closest to the target: mcpgen "
        "builds the 2026-07-28 result and downgrades it to the session's revision "
        "(`mcpgen._protocol.downgrade`) before encoding, which costs it more than its "
        "modern path, while the official server does less on its legacy path than on its "
        "modern one (there it builds a `Connection` and a `ServerRunner` per request, "
        "classifies the envelope and stamps `serverInfo`).",
        "- Both run in one asyncio event loop (ours synchronously inside it; anyio's "
        "default backend, no uvloop).",
        "- Absolute µs depend on the machine; compare ratios.",
        SECTION_END,
    ]
    return "\n".join(out) + "\n"


def _sizes(rows: list[Row]) -> str:
    sizes = dict.fromkeys(
        f"{row.case.era}: {row.reply_bytes:,} bytes" for row in rows if "list" in row.case.label
    )
    return "; ".join(sizes)


# --------------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _common.arg_parser(
        "Time one JSON-RPC request line to its reply: mcpgen vs the official SDK.",
        quick="short run (~12 s instead of ~60 s)",
    )
    _common.add_gc_option(parser)
    _common.add_doc_options(parser, "dispatch")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    args = parse_args(args_list)
    base = QUICK if args.quick else FULL
    settings = Settings(base.repeats, base.sample_ns, base.warmup_ns, gc_on=args.gc)
    env = Environment.current(args_list)
    rows = anyio.run(run, settings)
    print(format_console(rows, env, settings))
    if args.write_doc:
        section = format_section(rows, env, settings)
        _common.write_section(args.doc, "dispatch", section, _common.doc_header(env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
