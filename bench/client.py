"""Client benchmark: what one ``tools/call`` round trip costs the client.

What it measures: ``await client.call_tool("echo", {"text": "hi"})``, closed loop (one
call in flight), with mcpgen's ``mcpgen.Client`` and with the official MCP Python
SDK's ``mcp.client.Client``, in the same process and the same run.  A round trip
always includes a server, so the script separates the client's share two ways:

1. In memory (one process, no OS I/O).  Each SDK's own in-process route, client core
   plus server core: ``mcpgen.Client.memory(server)`` (``MemoryLink``: JSON lines
   through mcpgen's ``MemoryConnection`` into a server ``Session``) and the official
   ``Client(server)`` (2026-07-28: its ``DirectDispatcher`` pair into
   ``modern_on_request``, no JSON at all; legacy: ``InMemoryTransport``, i.e.
   ``Server.run`` over the SDK's in-memory streams of ``SessionMessage`` objects,
   driven by a ``JSONRPCDispatcher``), both eras.  Then the server alone on the very
   same route, driven by a null client that replays the request the real client sent
   (captured during the checks) and takes the reply as it comes.  Client share = round
   trip - server alone, per repeat.
2. Over stdio (the fairest "client-side cost").  Each client launches a server
   subprocess and calls it; the benchmark process holds nothing but the client, so
   its CPU time (``time.process_time_ns``) per call is the client's cost.  The
   server's CPU time is read from ``/proc/<pid>/task/*/schedstat``.  Both clients
   run against the same two servers: mcpgen's ``examples/bench_server.py stdio`` and
   the official low-level ``Server`` (``python bench/client.py
   --serve-official-stdio``: the same 100 tools, definitions taken from
   ``bench_server.py``'s own ``tools/list``, served by ``mcp.server.stdio``), in both
   eras: 8 combinations, plus "each SDK with its own server".

Informational rows: in memory, the official ``ClientSession.call_tool`` (the session
call without the ``Client``'s input-required driver around it).  Linux only: the
server processes are found and measured through ``/proc``.

Eras: 2026-07-28 pinned on both clients (``era="modern"`` / ``mode="2026-07-28"``,
no discovery probe) and legacy (``era="legacy"`` / ``mode="legacy"``: ``initialize``
once when connecting).  Every connection stays open for the whole run.

Before timing, every client's first result and every null-client reply is checked
(the echoed text, no error), every pair of clients must have negotiated the same
protocol version, and every stdio server process is identified by its command line;
the script stops if one is wrong.

Method (as ``bench/dispatch.py``): each side is warmed up and its loop count
calibrated to a fixed time per sample; then in every repeat each pair of sides is
timed back to back, alternating which goes first, the pairs one after the other, so
that drift in the machine's speed hits both sides and all pairs alike.  Garbage
collector off while timing unless ``--gc``.  Reported: medians per call, the ratio
of the medians (official / mcpgen) and the median and quartiles of the per-repeat
ratios.  A row meets the 5x target when both the ratio and the paired median do.

Usage (the official SDK must not enter the project's environment, so use the wrapper,
which makes a separate venv)::

    bench/run.sh bench/client.py                # ~100 s
    bench/run.sh bench/client.py --quick        # ~20 s
    bench/run.sh bench/client.py --write-doc    # also rewrite the client section
                                                # of docs/performance.md
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import dataclasses
import gc
import importlib.util
import json
import math
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec

import mcpgen
from mcpgen import Channel
from mcpgen import Server as OurServer
from mcpgen.transports import MemoryConnection

try:
    import mcp_types
    import pydantic
    from mcp.client import Client as OfficialClient
    from mcp.client.stdio import StdioServerParameters
    from mcp.server.lowlevel import Server as OfficialServer
    from mcp.server.runner import modern_on_request
    from mcp.shared.direct_dispatcher import create_direct_dispatcher_pair
    from mcp.shared.exceptions import MCPError
    from mcp.shared.memory import create_client_server_memory_streams
    from mcp.shared.message import SessionMessage
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise SystemExit(
        f"bench/client.py needs the official MCP SDK ({exc}); run it through "
        "bench/run.sh bench/client.py, which installs it into a separate venv."
    ) from exc

import _common
from _common import (
    LEGACY_VERSION,
    MODERN_META,
    MODERN_VERSION,
    REPO_ROOT,
    Compare,
    Settings,
    collector,
    compact,
    era_label,
    result_of,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))
from official_lowlevel import listing, make_server, serve_stdio

THIS_SCRIPT: Final = Path(__file__).resolve()
BENCH_SERVER: Final = REPO_ROOT / "examples" / "bench_server.py"
SECTION_START, SECTION_END = _common.markers("client")
SERVE_OFFICIAL: Final = "--serve-official-stdio"
TARGET_RATIO: Final = 5.0
N_TOOLS: Final = 100
ECHO_TEXT: Final = "hi"
RUN_DEADLINE_S: Final = 900.0

Op = Callable[[], Awaitable[Any]]


# ------------------------------------------------------------------- the two servers


def _initialize_line(version: str) -> bytes:
    return compact(_common.initialize(version, "bench"))


INITIALIZED: Final = compact(_common.INITIALIZED)
MODERN_LIST: Final = compact(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}
)
LEGACY_LIST: Final = compact({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


class NullChannel(Channel):
    """A channel that drops notifications and refuses detached work."""

    def notify(self, frame: bytes) -> None:
        pass

    def spawn(self, coro: Any) -> None:
        raise RuntimeError("listing tools never spawns work")


def load_bench_server() -> OurServer:
    """The mcpgen server of ``examples/bench_server.py`` (imported, not run)."""
    spec = importlib.util.spec_from_file_location("mcpgen_bench_server", BENCH_SERVER)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {BENCH_SERVER}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server: OurServer = module.server
    return server


def our_tool_defs(server: OurServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tools as mcpgen's server lists them, on a 2026-07-28 and on a legacy session."""
    channel = NullChannel()
    modern = server.session(channel)
    modern_defs = result_of(modern.receive(MODERN_LIST, channel), "ours tools/list", 1)["tools"]
    legacy = server.session(channel)
    result_of(legacy.receive(_initialize_line(LEGACY_VERSION), channel), "ours initialize", 0)
    legacy.receive(INITIALIZED, channel)
    legacy_defs = result_of(legacy.receive(LEGACY_LIST, channel), "ours tools/list", 1)["tools"]
    for defs in (modern_defs, legacy_defs):
        if len(defs) != N_TOOLS:
            raise SystemExit(f"{BENCH_SERVER.name} lists {len(defs)} tools, not {N_TOOLS}")
    return modern_defs, legacy_defs


def build_official(
    modern_defs: list[dict[str, Any]], legacy_defs: list[dict[str, Any]]
) -> OfficialServer:
    """The official low-level server with the tools of ``bench_server.py``
    (``bench/servers/official_lowlevel.py``'s ``make_server``).

    Same name and version as mcpgen's server (so the results carry the same
    ``serverInfo``), the tool definitions as mcpgen lists them in each era (a legacy
    listing leaves out an ``outputSchema`` whose root is not an object), and the same
    tool behaviour: ``echo`` returns the text, ``tool_NNN`` returns ``query:limit``.
    The OpenTelemetry middleware the SDK installs by default stays, as shipped.
    """
    return make_server(listing(modern_defs), listing(legacy_defs))


def serve_official_stdio() -> None:
    """The hidden mode ``--serve-official-stdio``: the official server on stdin/stdout."""
    anyio.run(serve_stdio, build_official(*our_tool_defs(load_bench_server())))


OUR_SERVER_COMMAND: Final = [sys.executable, str(BENCH_SERVER), "stdio"]
OFFICIAL_SERVER_COMMAND: Final = [sys.executable, str(THIS_SCRIPT), SERVE_OFFICIAL]


# ------------------------------------------------------------------------------ checks


def _builtins(result: Any) -> dict[str, Any]:
    """A result as JSON-shaped builtins (wire names), from either SDK."""
    if isinstance(result, msgspec.Struct):
        value: dict[str, Any] = msgspec.to_builtins(result)
        return value
    if isinstance(result, pydantic.BaseModel):
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(result, dict):
        return result
    raise SystemExit(f"unexpected result type {type(result).__name__}: {result!r:.300}")


def check_echo(result: Any, who: str) -> None:
    value = _builtins(result)
    content = value.get("content")
    if value.get("isError") or content != [{"type": "text", "text": ECHO_TEXT}]:
        raise SystemExit(f"{who}: tools/call did not echo {ECHO_TEXT!r}: {value!r:.400}")


def check_same_version(ours: str, official: str, want: str, what: str) -> None:
    if not ours == official == want:
        raise SystemExit(
            f"{what}: negotiated versions differ: mcpgen {ours!r}, official {official!r}, "
            f"expected {want!r}"
        )


# ----------------------------------------------------------------------- processes


def _children() -> set[int]:
    """Process ids of this process's children (from ``/proc/*/stat``)."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.add(int(entry))
    return found


def _new_server(before: set[int], marker: str, who: str) -> int:
    """The one child started since ``before``, checked to be the expected server."""
    new = _children() - before
    if len(new) != 1:
        raise SystemExit(f"{who}: expected one new server process, found {sorted(new)}")
    pid = new.pop()
    cmdline = Path("/proc", str(pid), "cmdline").read_bytes().replace(b"\0", b" ").decode()
    if marker not in cmdline:
        raise SystemExit(f"{who}: process {pid} is not the expected server: {cmdline}")
    return pid


def process_cpu_ns(pid: int | None) -> int:
    """CPU nanoseconds used so far by all threads of ``pid`` (0 for no process)."""
    if pid is None:
        return 0
    total = 0
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
    return total


# ------------------------------------------------------------------------------- sides


@dataclass
class Side:
    """One timed loop: a call, and what each repeat measured (nanoseconds per call)."""

    name: str
    call: Op
    server_pid: int | None = None
    n: int = 1
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)


def _echo_call(client: Any) -> Op:
    call_tool = client.call_tool

    def call() -> Awaitable[Any]:
        return call_tool("echo", {"text": ECHO_TEXT})

    return call


@dataclass
class Captured:
    """What a client put on its route for one ``tools/call`` (replayed by a null client)."""

    line: bytes = b""  # mcpgen: the JSON-RPC line
    method: str = ""  # official: the dispatcher call
    params: dict[str, Any] = field(default_factory=dict)
    opts: dict[str, Any] = field(default_factory=dict)


@asynccontextmanager
async def our_client(client: mcpgen.Client, name: str) -> AsyncIterator[tuple[Side, Captured]]:
    """Enter an mcpgen client, check its first call and capture the line it sends."""
    async with client:
        link = client.link
        original = link.send
        captured = Captured()

        async def spy(frame: bytes, headers: Any = None, request_id: Any = None) -> None:
            captured.line = frame
            await original(frame, headers, request_id)

        link.send = spy
        try:
            check_echo(await client.call_tool("echo", {"text": ECHO_TEXT}), name)
        finally:
            del link.send
        yield Side(name, _echo_call(client)), captured


@asynccontextmanager
async def official_client(
    client: OfficialClient, name: str
) -> AsyncIterator[tuple[Side, Captured]]:
    """Enter an official client, check its first call and capture what it dispatches."""
    async with client:
        dispatcher: Any = client.session._dispatcher
        original = dispatcher.send_raw_request
        captured = Captured()

        async def spy(method: str, params: Any, opts: Any = None) -> Any:
            if method == "tools/call":
                captured.method = method
                captured.params = copy.deepcopy(dict(params or {}))
                captured.opts = copy.deepcopy(dict(opts or {}))
            return await original(method, params, opts)

        dispatcher.send_raw_request = spy
        try:
            # The first call also lists the tools (the SDK checks results against the
            # tool's output schema, which it learns from tools/list).
            check_echo(await client.call_tool("echo", {"text": ECHO_TEXT}), name)
        finally:
            del dispatcher.send_raw_request
        if captured.method != "tools/call":
            raise SystemExit(f"{name}: no tools/call went through the dispatcher")
        yield Side(name, _echo_call(client)), captured


@asynccontextmanager
async def our_server_alone(
    server: OurServer, captured: Captured, version: str | None
) -> AsyncIterator[Side]:
    """mcpgen's server on the client's route, ``MemoryConnection``, with a null client:
    send the line the client sent, take the reply line (``version``: legacy handshake)."""
    connection = MemoryConnection(server)
    try:
        if version is not None:
            await connection.send(_initialize_line(version))
            result_of(await connection.receive(), "ours initialize", 0)
            await connection.send(INITIALIZED)
        send, receive, line = connection.send, connection.receive, captured.line

        async def call() -> bytes:
            await send(line)
            return await receive()

        who, want_id = "mcpgen server alone", json.loads(line)["id"]
        _common.check_echo(await call(), who, ECHO_TEXT, want_id)
        yield Side("mcpgen server alone", call)
    finally:
        await connection.close()


async def _no_request(dctx: Any, method: str, params: Any) -> dict[str, Any]:
    raise MCPError(code=mcp_types.METHOD_NOT_FOUND, message=method)


async def _no_notify(dctx: Any, method: str, params: Any) -> None:
    return None


@asynccontextmanager
async def official_direct_alone(server: OfficialServer, captured: Captured) -> AsyncIterator[Side]:
    """The official server on its in-process 2026-07-28 route (what ``Client(server)``
    uses), a ``DirectDispatcher`` pair into ``modern_on_request``, with a null client:
    the dispatcher call the real client made, the raw result dict back."""
    async with server.lifespan(server) as state, anyio.create_task_group() as tg:
        client, server_side = create_direct_dispatcher_pair(raise_handler_exceptions=False)
        await tg.start(server_side.run, modern_on_request(server, state), _no_notify)
        await tg.start(client.run, _no_request, _no_notify)
        send = client.send_raw_request
        method, params, opts = captured.method, captured.params, captured.opts

        async def call() -> dict[str, Any]:
            return await send(method, params, opts)

        try:
            check_echo(await call(), "official server alone (direct)")
            yield Side("official server alone", call)
        finally:
            client.close()
            server_side.close()


@asynccontextmanager
async def official_streams_alone(
    server: OfficialServer, captured: Captured, version: str
) -> AsyncIterator[Side]:
    """The official server on its in-process legacy route (what ``Client(server,
    mode="legacy")`` uses): ``Server.run`` over the SDK's in-memory streams, with a null
    client sending the request as a ``SessionMessage`` and taking the reply message."""
    adapter = mcp_types.jsonrpc_message_adapter
    initialize = adapter.validate_json(_initialize_line(version), by_name=False)
    initialized = adapter.validate_json(INITIALIZED, by_name=False)
    request = adapter.validate_python(
        {"jsonrpc": "2.0", "id": 1, "method": captured.method, "params": captured.params},
        by_name=False,
    )
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        read, write = client_streams
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, *server_streams, server.create_initialization_options())
            await write.send(SessionMessage(initialize))
            await read.receive()
            await write.send(SessionMessage(initialized))

            async def call() -> Any:
                await write.send(SessionMessage(request))
                return await read.receive()

            try:
                reply = (await call()).message.model_dump(by_alias=True, mode="json")
                check_echo(reply.get("result", reply), "official server alone (streams)")
                yield Side("official server alone", call)
            finally:
                await write.aclose()  # EOF: the server's loop ends


@asynccontextmanager
async def stdio_side(
    make: Callable[[], Any], wrap: Any, name: str, marker: str
) -> AsyncIterator[tuple[Side, str]]:
    """A client of a server subprocess; the side knows the server's pid."""
    before = _children()
    client = make()
    async with wrap(client, name) as (side, _):
        side.server_pid = _new_server(before, marker, name)
        yield side, client.protocol_version


@asynccontextmanager
async def bare_side(command: list[str], marker: str) -> AsyncIterator[Side]:
    """The floor of client-side cost against a server: a bare asyncio client that writes
    one fixed 2026-07-28 request line, reads the reply line and parses it (no SDK)."""
    before = _children()
    proc = await asyncio.create_subprocess_exec(
        *command,
        cwd=str(REPO_ROOT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": ECHO_TEXT}, "_meta": MODERN_META},
    }
    line = compact(request) + b"\n"

    async def call() -> bytes:
        stdin.write(line)
        reply = await stdout.readline()
        json.loads(reply)  # what any client must do with a reply, at the least
        return reply

    try:
        _common.check_echo(await call(), "bare client", ECHO_TEXT)
        side = Side("bare asyncio client", call)
        side.server_pid = _new_server(before, marker, "bare client")
        yield side
    finally:
        stdin.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 10)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


# ------------------------------------------------------------------------------ timing


FULL: Final = Settings(repeats=21, sample_ns=200_000_000, warmup_ns=200_000_000)
QUICK: Final = Settings(repeats=7, sample_ns=60_000_000, warmup_ns=40_000_000)


async def _timed(side: Side, n: int, settings: Settings) -> tuple[int, int, int]:
    """Wall, own-process CPU and server-process CPU nanoseconds of ``n`` calls."""
    call, pid = side.call, side.server_pid
    with collector(settings.gc_on):
        calls = range(n)
        server0 = process_cpu_ns(pid)
        cpu0 = time.process_time_ns()
        start = time.perf_counter_ns()
        for _ in calls:
            await call()
        wall = time.perf_counter_ns() - start
        cpu = time.process_time_ns() - cpu0
        server = process_cpu_ns(pid) - server0
    return wall, cpu, server


async def calibrate(side: Side, settings: Settings) -> None:
    """Warm up for ``warmup_ns``, then set the loop count that fills one sample."""
    deadline = time.perf_counter_ns() + settings.warmup_ns
    while time.perf_counter_ns() < deadline:
        await side.call()
    n = 1
    while True:
        wall, _, _ = await _timed(side, n, settings)
        if wall * 10 >= settings.sample_ns:
            side.n = max(1, round(n * settings.sample_ns / wall))
            return
        n *= 2


async def sample(side: Side, settings: Settings) -> None:
    wall, cpu, server = await _timed(side, side.n, settings)
    side.wall.append(wall / side.n)
    side.cpu.append(cpu / side.n)
    side.server_cpu.append(server / side.n)


@dataclass(frozen=True)
class Pair:
    """Two sides timed back to back in every repeat."""

    label: str
    ours: Side
    official: Side


async def measure(pairs: list[Pair], settings: Settings, singles: list[Side]) -> None:
    """Warm up and calibrate every side, then time all pairs ``settings.repeats`` times.

    Each repeat goes through all the pairs in turn, and within a pair runs the two sides
    back to back, alternating which goes first; then each single side (the floors).
    """
    for pair in pairs:
        print(f"warming up: {pair.label}", file=sys.stderr, flush=True)
        await calibrate(pair.ours, settings)
        await calibrate(pair.official, settings)
    for single in singles:
        await calibrate(single, settings)
    for repeat in range(settings.repeats):
        print(f"repeat {repeat + 1}/{settings.repeats}", file=sys.stderr, flush=True)
        for pair in pairs:
            gc.collect()
            first, second = (
                (pair.ours, pair.official) if repeat % 2 == 0 else (pair.official, pair.ours)
            )
            await sample(first, settings)
            await sample(second, settings)
        for single in singles:
            await sample(single, settings)


# ----------------------------------------------------------------------------- results


def _minus(a: list[float], b: list[float]) -> list[float]:
    return [x - y for x, y in zip(a, b, strict=True)]


def _walls(pair: Pair) -> tuple[list[float], list[float]]:
    """The per-repeat nanoseconds per call of the pair's two sides."""
    return pair.ours.wall, pair.official.wall


def _share(whole: Pair, part: Pair) -> tuple[list[float], list[float]]:
    """``whole`` minus ``part``, per repeat, on each side (a client's share)."""
    return _minus(whole.ours.wall, part.ours.wall), _minus(whole.official.wall, part.official.wall)


@dataclass(frozen=True)
class MemoryRow:
    label: str
    era: str
    compare: Compare
    target: bool


@dataclass(frozen=True)
class StdioRow:
    server: str
    era: str
    ours: Side  # the mcpgen client
    official: Side  # the official client
    target: bool

    @property
    def wall(self) -> Compare:
        return Compare(self.ours.wall, self.official.wall, TARGET_RATIO)

    @property
    def cpu(self) -> Compare:
        return Compare(self.ours.cpu, self.official.cpu, TARGET_RATIO)


@dataclass(frozen=True)
class FloorRow:
    """A bare client's CPU per call against one server (2026-07-28), beside the SDKs'."""

    server: str
    bare: Side
    ours: Side
    official: Side


@dataclass
class Results:
    memory: list[MemoryRow]
    stdio: list[StdioRow]
    floors: list[FloorRow]


# ----------------------------------------------------------------------------- the run


async def run(settings: Settings) -> Results:
    """Everything, bounded: a hung server or client ends the run with an error."""
    with anyio.fail_after(RUN_DEADLINE_S):
        return await _run(settings)


async def _run(settings: Settings) -> Results:
    ours_server = load_bench_server()
    official_server = build_official(*our_tool_defs(ours_server))
    pairs: list[Pair] = []
    memory_rows: list[MemoryRow] = []
    stdio_rows: list[StdioRow] = []

    async with AsyncExitStack() as stack:
        # -- in memory: each SDK's own in-process route, then its server alone on it.
        memory: list[tuple[str, Pair, Pair, Pair]] = []
        for era, mode in (("modern", MODERN_VERSION), ("legacy", "legacy")):
            ours_client = mcpgen.Client.memory(ours_server, era=era)
            ours_side, ours_sent = await stack.enter_async_context(
                our_client(ours_client, "mcpgen client")
            )
            off_client = OfficialClient(official_server, mode=mode)
            off_side, off_sent = await stack.enter_async_context(
                official_client(off_client, "official client")
            )
            version = ours_client.protocol_version
            want = MODERN_VERSION if era == "modern" else LEGACY_VERSION
            check_same_version(version, off_client.protocol_version, want, f"in memory, {era}")
            legacy_version = None if era == "modern" else version
            ours_alone = await stack.enter_async_context(
                our_server_alone(ours_server, ours_sent, legacy_version)
            )
            off_alone = await stack.enter_async_context(
                official_direct_alone(official_server, off_sent)
                if era == "modern"
                else official_streams_alone(official_server, off_sent, version)
            )
            round_trip = Pair(f"in memory, round trip, {era}", ours_side, off_side)
            alone = Pair(f"in memory, server alone, {era}", ours_alone, off_alone)
            # Informational: the official session-level call, without the Client's
            # input-required driver around it (mcpgen's side is the same call as above).
            session = Pair(
                f"in memory, official ClientSession.call_tool, {era}",
                Side("mcpgen client", _echo_call(ours_client)),
                Side("official ClientSession", _echo_call(off_client.session)),
            )
            check_echo(await session.official.call(), "official ClientSession")
            pairs += [round_trip, alone, session]
            memory.append((era_label(version), round_trip, alone, session))

        # -- stdio: both clients against both servers, both eras.
        print("starting the stdio servers", file=sys.stderr, flush=True)
        stdio: dict[tuple[str, str], Pair] = {}
        bare: dict[str, Side] = {}
        for server_label, command, marker in (
            ("mcpgen `bench_server.py`", OUR_SERVER_COMMAND, BENCH_SERVER.name),
            ("official low-level `Server`", OFFICIAL_SERVER_COMMAND, SERVE_OFFICIAL),
        ):
            for era, mode in (("modern", MODERN_VERSION), ("legacy", "legacy")):
                params = StdioServerParameters(
                    command=command[0], args=command[1:], cwd=str(REPO_ROOT)
                )

                def make_ours(c: list[str] = command, e: str = era) -> mcpgen.Client:
                    return mcpgen.Client.stdio(c, era=e, cwd=str(REPO_ROOT))

                def make_official(
                    p: StdioServerParameters = params, m: str = mode
                ) -> OfficialClient:
                    return OfficialClient(p, mode=m)

                ours_side, ours_version = await stack.enter_async_context(
                    stdio_side(make_ours, our_client, "mcpgen client", marker)
                )
                off_side, off_version = await stack.enter_async_context(
                    stdio_side(make_official, official_client, "official client", marker)
                )
                want = MODERN_VERSION if era == "modern" else LEGACY_VERSION
                check_same_version(ours_version, off_version, want, f"{server_label}, {era}")
                pair = Pair(f"stdio, {server_label}, {era}", ours_side, off_side)
                pairs.append(pair)
                stdio[(server_label, era_label(want))] = pair
            bare[server_label] = await stack.enter_async_context(bare_side(command, marker))

        await measure(pairs, settings, list(bare.values()))

        for era, round_trip, alone, session in memory:
            for label, (ours, official), target in (
                ("Round trip: client + its own server", _walls(round_trip), False),
                ("Server alone on that route (null client)", _walls(alone), False),
                ("Client share = round trip - server alone", _share(round_trip, alone), True),
                ("Round trip, official `ClientSession.call_tool`", _walls(session), False),
                ("Client share, official `ClientSession.call_tool`", _share(session, alone), False),
            ):
                memory_rows.append(
                    MemoryRow(label, era, Compare(ours, official, TARGET_RATIO), target)
                )
        for (server_label, era), pair in stdio.items():
            stdio_rows.append(StdioRow(server_label, era, pair.ours, pair.official, target=True))
        for era in (era_label(MODERN_VERSION), era_label(LEGACY_VERSION)):
            ours_own = stdio[("mcpgen `bench_server.py`", era)].ours
            official_own = stdio[("official low-level `Server`", era)].official
            stdio_rows.append(
                StdioRow("each SDK with its own server", era, ours_own, official_own, False)
            )
        modern = era_label(MODERN_VERSION)
        floors = [
            FloorRow(label, side, stdio[(label, modern)].ours, stdio[(label, modern)].official)
            for label, side in bare.items()
        ]
        print("stopping the clients and servers", file=sys.stderr, flush=True)
    return Results(memory_rows, stdio_rows, floors)


# ----------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class Environment(_common.SdkEnvironment):
    """Where and with what the numbers were measured, and the machine's load."""

    load_start: float
    load_end: float = math.nan

    @classmethod
    def current(cls, argv: list[str]) -> Environment:
        return cls.collect(argv, "bench/client.py", load_start=os.getloadavg()[0])

    def finished(self) -> Environment:
        return dataclasses.replace(self, load_end=os.getloadavg()[0])

    @property
    def load(self) -> str:
        return f"{self.load_start:.2f} at the start, {self.load_end:.2f} at the end"


def _verdict(compare: Compare, target: bool) -> str:
    return compare.verdict("" if target else "info")


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f}"


def _per_s(ns: float) -> str:
    return f"{1e9 / ns:,.0f}" if ns > 0 else "-"


MEMORY_HEADER: Final = (
    "in memory",
    "era",
    "mcpgen µs/call",
    "mcpgen calls/s",
    "official µs/call",
    "official calls/s",
    "ratio",
    "paired (IQR)",
    f"meets {TARGET_RATIO:g}x",
)


def _memory_cells(row: MemoryRow) -> tuple[str, ...]:
    c = row.compare
    share = "share" in row.label
    return (
        row.label,
        row.era,
        _us(c.ours_median),
        "-" if share else _per_s(c.ours_median),
        _us(c.official_median),
        "-" if share else _per_s(c.official_median),
        f"{c.ratio:.1f}x",
        c.paired(1),
        _verdict(c, row.target),
    )


STDIO_HEADER: Final = (
    "stdio server",
    "era",
    "mcpgen calls/s",
    "official calls/s",
    "round-trip ratio",
    "mcpgen client CPU µs/call",
    "official client CPU µs/call",
    "client CPU ratio",
    "paired (IQR)",
    "server CPU µs/call (mcpgen / official client)",
    f"meets {TARGET_RATIO:g}x",
)


def _stdio_cells(row: StdioRow) -> tuple[str, ...]:
    wall, cpu = row.wall, row.cpu
    server = (
        f"{_us(statistics.median(row.ours.server_cpu))} / "
        f"{_us(statistics.median(row.official.server_cpu))}"
    )
    return (
        row.server,
        row.era,
        _per_s(wall.ours_median),
        _per_s(wall.official_median),
        f"{wall.ratio:.1f}x",
        _us(cpu.ours_median),
        _us(cpu.official_median),
        f"{cpu.ratio:.1f}x",
        cpu.paired(1),
        server,
        _verdict(cpu, row.target),
    )


FLOOR_HEADER: Final = (
    "stdio server (2026-07-28)",
    "bare client CPU µs/call",
    "mcpgen client CPU µs/call",
    "official client CPU µs/call",
    "mcpgen over bare",
    "official over bare (the most any client could gain)",
)


def _floor_cells(row: FloorRow) -> tuple[str, ...]:
    bare = statistics.median(row.bare.cpu)
    ours = statistics.median(row.ours.cpu)
    official = statistics.median(row.official.cpu)
    return (
        row.server,
        _us(bare),
        _us(ours),
        _us(official),
        f"{ours / bare:.2f}x",
        f"{official / bare:.1f}x",
    )


def _targets(results: Results) -> list[tuple[str, str, Compare]]:
    """The rows the target is about: how the console and the doc name each, its figures."""
    out = [
        (f"client share, in memory, {r.era}", f"in memory, client share, {r.era}", r.compare)
        for r in results.memory
        if r.target
    ]
    out += [
        (
            f"client CPU, stdio, {r.server}, {r.era}",
            f"stdio, client CPU, {r.server}, {r.era}",
            r.cpu,
        )
        for r in results.stdio
        if r.target
    ]
    return out


def _target_lines(results: Results) -> list[str]:
    return [
        f"Target ({what}): {'MET' if c.meets_target else 'NOT MET'} - "
        f"{c.ratio:.1f}x (paired {c.paired_quartiles[1]:.1f}x)"
        for what, _, c in _targets(results)
    ]


def format_console(results: Results, env: Environment, settings: Settings) -> str:
    text = _common.columns(MEMORY_HEADER, [_memory_cells(r) for r in results.memory], 2)
    text.append("")
    text += _common.columns(STDIO_HEADER, [_stdio_cells(r) for r in results.stdio], 2)
    text.append("")
    text += _common.columns(FLOOR_HEADER, [_floor_cells(r) for r in results.floors], 1)
    text += [
        "",
        f"{env.machine}, {env.cpu}, {env.cores} cores; Python {env.python}; mcpgen "
        f"{env.mcpgen}; msgspec {env.msgspec}; mcp {env.mcp}; pydantic {env.pydantic}; "
        f"anyio {env.anyio}; OTel tracer provider {env.tracer_provider}",
        f"{settings.repeats} repeats, ~{settings.sample_ns / 1e9:.2f} s per sample, GC "
        f"{'on' if settings.gc_on else 'off'} while timing; ratio = official median / mcpgen "
        "median; paired = median (IQR) of per-repeat ratios",
        f"load average (1 min): {env.load}",
        *_target_lines(results),
    ]
    return "\n".join(text)


def format_section(results: Results, env: Environment, settings: Settings) -> str:
    out = [
        SECTION_START,
        "## Client: one `tools/call` round trip, mcpgen's client vs the official SDK's",
        "",
        "Generated by `bench/client.py`; do not edit by hand, re-run the command below.",
        "",
        f"- Date: {env.date} (UTC)",
        f"- Command: `{env.command}`",
        f"- Machine: `{env.machine}`, {env.cpu}, {env.cores} cores",
        f"- Python {env.python}, mcpgen {env.mcpgen}, msgspec {env.msgspec}; "
        f"mcp {env.mcp} (mcp-types {env.mcp_types}), pydantic {env.pydantic} "
        f"(pydantic-core {env.pydantic_core}), anyio {env.anyio} on asyncio, "
        f"opentelemetry-api {env.otel_api} (tracer provider `{env.tracer_provider}`)",
        f"- {settings.repeats} repeats, ~{settings.sample_ns / 1e9:.2f} s per sample per "
        "side; each repeat times every pair of sides in turn, the two sides back to back "
        "(alternating which goes first); garbage collector "
        f"{'on' if settings.gc_on else 'off'} while timing; medians reported",
        f"- Load average (1 min) of the machine: {env.load} (other work on the machine "
        "adds noise; the paired ratios resist it better than the medians)",
        "",
        'One call = `await client.call_tool("echo", {"text": "hi"})`, closed loop (one call '
        "in flight), on `mcpgen.Client` and on the official `mcp.client.Client`, both "
        "entered once and kept open. Eras: 2026-07-28 pinned on both clients "
        '(`era="modern"`, `mode="2026-07-28"`: no discovery probe) and legacy (`initialize` '
        "once when connecting; both negotiate 2025-11-25). Ratio = official median / mcpgen "
        "median; higher is better for mcpgen. Paired = median, and in brackets the "
        "quartiles, of the official/mcpgen ratios of the single repeats. A row meets the "
        "target when both the ratio and the paired median do.",
        "",
        "### In memory: each SDK's in-process route, one process, no OS I/O",
        "",
        *_common.md_table(
            MEMORY_HEADER, [_memory_cells(r) for r in results.memory], 2, last_left=True
        ),
        "",
        "- Round trip: `mcpgen.Client.memory(server)` (its `MemoryLink`: JSON-RPC lines "
        "through `MemoryConnection` into a server `Session`, replies read by the link's "
        "reader task) against `examples/bench_server.py`'s server; the official "
        "`Client(server)` against the official low-level `Server` with the same tools. "
        "The official 2026-07-28 route is its `DirectDispatcher` pair into "
        "`modern_on_request`: Python dicts, no JSON-RPC text at all (mcpgen's route "
        "encodes and decodes JSON both ways); its legacy route is `InMemoryTransport`: "
        "`Server.run` over in-memory streams of `SessionMessage` objects, a "
        "`JSONRPCDispatcher` on the client side, again no JSON text.",
        "- Server alone: the same server on the same route, driven by a null client that "
        "replays the request the real client sent (captured during the checks) and awaits "
        "the reply: mcpgen `MemoryConnection.send(line)` + `receive()`; official "
        "`DirectDispatcher.send_raw_request(method, params, opts)` (2026-07-28) or a "
        "`SessionMessage` sent on the server's read stream and its reply received "
        "(legacy). The route's own plumbing (queues, dispatcher, streams) is counted "
        "here, with the server, on both sides.",
        "- Client share: round trip minus server alone, per repeat: the client's own "
        "work (building and validating the request, matching the reply, validating the "
        "result) and its event-loop hops.",
        "",
        "### Over stdio: client process CPU per call, both clients against both servers",
        "",
        *_common.md_table(
            STDIO_HEADER, [_stdio_cells(r) for r in results.stdio], 2, last_left=True
        ),
        "",
        "- Servers: mcpgen's `python examples/bench_server.py stdio` and the official "
        "low-level `Server` served by `mcp.server.stdio.stdio_server` (`python "
        f"bench/client.py {SERVE_OFFICIAL}`), the same {N_TOOLS} tools (definitions "
        "taken from `bench_server.py`'s own `tools/list` in each era), the same server "
        "name and version, `echo` returning its text. One server process per client and "
        "era; eight processes, all open for the whole run.",
        "- Clients: `mcpgen.Client.stdio(command)` and the official "
        "`Client(StdioServerParameters(...))` (its `stdio_client` transport: reader and "
        "writer tasks, `SessionMessage` streams, a `JSONRPCDispatcher`).",
        "- Client CPU: `time.process_time_ns()` of the benchmark process, which holds "
        "nothing but the client (the other connections sit idle), divided by the calls; "
        "this is the client-side cost the target is about. Server CPU: the server "
        "process's threads, from `/proc/<pid>/task/*/schedstat`, for the same calls "
        "(it differs per client because each client sends a slightly different "
        "request, at a different pace). Round-trip ratio: mcpgen calls/s over official "
        "calls/s, which includes the pipes and both processes waking up.",
        "- \"each SDK with its own server\" pairs mcpgen's client on mcpgen's server with "
        "the official client on the official server (same samples as the rows above).",
        "",
        "The floor: a bare asyncio client (no SDK: write one fixed request line, read the "
        "reply line, `json.loads` it) against the same two servers, timed in the same "
        "repeats. Its CPU per call is what any client pays on this machine for the pipe "
        "and for waking up, so official / bare bounds the ratio any client could reach "
        "against that server.",
        "",
        *_common.md_table(FLOOR_HEADER, [_floor_cells(r) for r in results.floors], 1),
        "",
        f"Project target: the client-side cost at least {TARGET_RATIO:g}x lower with "
        "mcpgen's client than with the official client (client CPU per call over stdio "
        "against the same server, and the in-memory client share), in both eras:",
        "",
    ]
    out += [
        f"- {what}: {'met' if c.meets_target else '**not met**'}, {c.ratio:.1f}x "
        f"(paired {c.paired_quartiles[1]:.1f}x)."
        for _, what, c in _targets(results)
    ]
    out += [
        "",
        "Notes:",
        "",
        "- Same work on both sides: before timing, each client's first result is checked "
        '(content exactly `[{"type": "text", "text": "hi"}]`, no error), so is each null '
        "client's reply, both clients of a pair must have negotiated the same protocol "
        "version, and each stdio server process is identified by its command line.",
        "- The official `Client.call_tool` is timed (its `call_tool` runs the "
        "input-required driver around `ClientSession.call_tool`, which checks the result "
        "against the tool's output schema, learnt from one `tools/list` on the first "
        "call); mcpgen's `Client.call_tool` likewise runs its input-required rounds on "
        "2026-07-28. Neither client is configured beyond its era.",
        "- The in-memory split is an estimate: the two loops run a moment apart, and the "
        "null client is not exactly the client's way of driving the route (mcpgen's "
        "client reads replies in a reader task, the null client awaits them inline). "
        "The stdio CPU figures need no subtraction.",
        "- The official in-memory routes carry Python objects, not JSON text; over stdio "
        "both clients encode and decode JSON. With the garbage collector off while "
        "timing, the collection cost of each client's garbage is not counted (`--gc` "
        "counts it).",
        "- The servers (official: OpenTelemetry middleware included, as shipped; the "
        "tracer is the no-op proxy here) take their CPU in their own process over stdio; "
        "on this 2-core machine the client and the server of a closed loop rarely run at "
        "once, so calls/s is about 1 / (client + server + pipe and wake-up latency).",
        *_wait_note(results),
        "- Both clients run in one asyncio event loop (anyio's default backend, no "
        "uvloop), and so does each server.",
        "- Absolute µs depend on the machine; compare ratios.",
        SECTION_END,
    ]
    return "\n".join(out) + "\n"


def _wait_note(results: Results) -> list[str]:
    """How much the same client's CPU per call changes with the server it waits for."""
    ours = {(r.server, r.era): statistics.median(r.ours.cpu) for r in results.stdio}
    era = era_label(MODERN_VERSION)
    fast = ours.get(("mcpgen `bench_server.py`", era))
    slow = ours.get(("official low-level `Server`", era))
    if fast is None or slow is None:
        return []
    return [
        "- A client's CPU per call also depends on how long it waits for each reply "
        "(likely wake-up and cache effects of the idle wait): the same mcpgen client "
        f"spent {_us(fast)} µs per call against mcpgen's server and {_us(slow)} µs "
        f"against the official one ({era}). The official server takes about a "
        "millisecond per call, so both clients pay extra against it and the ratio "
        "shrinks; the rows against mcpgen's server, which answers within tens of µs, are "
        "the cleaner client-side figures."
    ]


# --------------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _common.arg_parser(
        "Time a tools/call round trip: mcpgen's client vs the official SDK's.",
        quick="short run (~20 s instead of ~100 s)",
    )
    _common.add_gc_option(parser)
    _common.add_doc_options(parser, "client")
    parser.add_argument(SERVE_OFFICIAL, action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _first_exit(group: BaseExceptionGroup[Any]) -> SystemExit | None:
    for exc in group.exceptions:
        if isinstance(exc, SystemExit):
            return exc
        if isinstance(exc, BaseExceptionGroup):
            found = _first_exit(exc)
            if found is not None:
                return found
    return None


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    args = parse_args(args_list)
    if args.serve_official_stdio:
        serve_official_stdio()
        return 0
    base = QUICK if args.quick else FULL
    settings = Settings(base.repeats, base.sample_ns, base.warmup_ns, gc_on=args.gc)
    env = Environment.current(args_list)
    try:
        results = anyio.run(run, settings)
    except BaseExceptionGroup as group:  # a failed check inside a task group
        stop = _first_exit(group)
        if stop is None:
            raise
        raise stop from None
    env = env.finished()
    print(format_console(results, env, settings))
    if args.write_doc:
        section = format_section(results, env, settings)
        _common.write_section(args.doc, "client", section, _common.doc_header(env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
