"""End-to-end benchmark suite: real server processes, mcpgen vs the official SDK vs the
raw ceiling, over stdio and Streamable HTTP, in one run.

Servers under test (each a subprocess of the benchmark venv's python, all exposing the
same surface: ``echo(text)``, ``add(a, b)`` and ``tool_002`` .. ``tool_099``, 100 tools
in one ``tools/list`` page):

- ``mcpgen``: ``examples/bench_server.py`` (``stdio`` / ``http --host --port``);
- the official SDK's low-level ``Server`` (``bench/servers/official_lowlevel.py``) and
  its high-level ``MCPServer`` (``bench/servers/official_mcpserver.py``);
- the raw ceiling (``bench/servers/raw_ceiling.py``): an asyncio stdio loop and a bare
  ASGI app that only parse each message and write a canned reply with its id.

Every HTTP server runs under one uvicorn worker with the same ``uvicorn.Config``
options (uvloop and httptools when installed, which ``bench/run.sh`` does), bound to
127.0.0.1.

Workloads, in both eras (2026-07-28: per-request ``_meta``, no handshake; legacy
2025-11-25: ``initialize`` + ``notifications/initialized`` first):

1. stdio: closed-loop ``tools/call`` of ``echo`` (one request in flight), pipelined
   burst (N requests written by one thread while the main thread reads the N replies),
   closed-loop ``tools/list`` (100 tools); requests/s and p50/p99 latency.
2. Streamable HTTP: ``tools/call`` of ``echo`` at 1, 16 and 64 connections with
   ``wrk`` (one thread; ``bench/wrk/mcp.lua`` sets the body and headers); wrk's own
   CPU time is measured (``wait4`` rusage) and shown beside the server's, so a
   load-generator bottleneck would show.
3. Cold start (``Popen`` to the first ``tools/list`` reply) and import time; peak RSS
   (``VmHWM``) of each server process after its workloads.
4. callgrind instructions per stdio ``tools/call`` (and ``tools/list`` for mcpgen and
   the ceiling) (``valgrind --tool=callgrind
   --instr-atstart=no``; instrumentation switched on after a warm-up with
   ``callgrind_control``, then two segments of N1 and N2 calls are dumped: per call =
   (I2 - I1) / (N2 - N1)).

Method: every repeat starts fresh server processes (all servers of a phase at once,
before timing), checks their replies (the echoed text; 100 tools in one page, with
exactly mcpgen's definitions where the server is given them), warms them up, then runs
each workload on every server in turn, in the order low-level, mcpgen, ceiling,
MCPServer (mcpgen next to both references), reversed every turn: A B C D, D C B A ...
On stdio a workload's time per server is cut into slices and the servers take turns
slice by slice, so the machine's speed drifting (it does, a lot, on this shared 2-core
machine) hits them alike; a repeat's figure for a server is its requests over its own
time summed over its slices. HTTP gives each server and workload one or more wrk runs per
repeat, in passes of one wrk run per server, the servers again taking turns.
Reported: medians over repeats, the ratio of the medians, and the median
(min-max) of the per-repeat ratios mcpgen / official and mcpgen / ceiling. A ratio
target is met when both the ratio of medians and the median paired ratio meet it.

Usage (the official SDK must not enter the project's environment: the wrapper runs
this in the benchmark venv)::

    bench/run.sh bench/suite.py               # full run, ~10 min
    bench/run.sh bench/suite.py --quick       # < 3 min
    bench/run.sh bench/suite.py --write-doc   # also rewrite the suite section of
                                              # docs/performance.md

Needs ``wrk`` (Debian: ``apt-get install -y wrk``) unless ``--no-http``, and valgrind
(``apt-get install -y valgrind``) unless ``--no-callgrind``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import http.client
import json
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import _common
from _common import INITIALIZED, MODERN_META, REPO_ROOT, compact, era_label, md_table

SERVERS_DIR: Final = REPO_ROOT / "bench" / "servers"
WRK_SCRIPT: Final = REPO_ROOT / "bench" / "wrk" / "mcp.lua"
SECTION_START, SECTION_END = _common.markers("suite")

HOST: Final = "127.0.0.1"
MODERN: Final = _common.MODERN_VERSION
LEGACY: Final = _common.LEGACY_VERSION
ERAS: Final = (MODERN, LEGACY)
N_TOOLS: Final = 100
ECHO_TEXT: Final = "hello"
MIB: Final = 1024 * 1024
CONCURRENCY: Final = (1, 16, 64)


# ------------------------------------------------------------------------------ messages


def with_meta(params: dict[str, Any], era: str) -> dict[str, Any]:
    return {**params, "_meta": MODERN_META} if era == MODERN else params


def call_request(rid: int, era: str) -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": ECHO_TEXT}}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": with_meta(params, era)}


def list_request(rid: int, era: str) -> dict[str, Any]:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": "tools/list"}
    if era == MODERN:
        request["params"] = {"_meta": MODERN_META}
    return request


INITIALIZE: Final = _common.initialize(LEGACY, "bench-suite")


def line(message: dict[str, Any]) -> bytes:
    return compact(message) + b"\n"


# ------------------------------------------------------------------------------- servers


@dataclass(frozen=True)
class ServerSpec:
    """One server under test."""

    key: str
    label: str
    script: Path
    role: str  # "ours", "official" or "ceiling"
    imports: str  # what the import-time row times (the server's own imports)
    same_defs: bool  # lists exactly mcpgen's tool definitions (checked)

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, str(self.script), *args]


_UVLOOP = "try:\n    import uvloop\nexcept ImportError:\n    pass\n"
MCPGEN: Final = ServerSpec(
    "mcpgen",
    "mcpgen",
    REPO_ROOT / "examples" / "bench_server.py",
    "ours",
    "import mcpgen\n" + _UVLOOP,
    same_defs=True,
)
LOWLEVEL: Final = ServerSpec(
    "lowlevel",
    "official low-level",
    SERVERS_DIR / "official_lowlevel.py",
    "official",
    "import anyio, mcp_types\nfrom mcp.server.lowlevel import Server\n"
    "from mcp.server.stdio import stdio_server\n",
    same_defs=True,
)
MCPSERVER: Final = ServerSpec(
    "mcpserver",
    "official MCPServer",
    SERVERS_DIR / "official_mcpserver.py",
    "official",
    "from mcp.server.mcpserver import MCPServer\n",
    same_defs=False,
)
CEILING: Final = ServerSpec(
    "ceiling",
    "raw ceiling",
    SERVERS_DIR / "raw_ceiling.py",
    "ceiling",
    "import asyncio, json\n" + _UVLOOP,
    same_defs=True,
)
SERVERS: Final = (MCPGEN, LOWLEVEL, MCPSERVER, CEILING)
OFFICIAL_REF: Final = LOWLEVEL  # the official server the targets compare against


# The order servers take turns in: mcpgen next to both of its references.
RUN_ORDER: Final = (LOWLEVEL, MCPGEN, CEILING, MCPSERVER)


def in_turn(turn: int) -> tuple[ServerSpec, ...]:
    """All servers in ``RUN_ORDER``, forward on even turns and backward on odd ones."""
    return RUN_ORDER if turn % 2 == 0 else tuple(reversed(RUN_ORDER))


class ServerGone(SystemExit):
    """A server under test died, hung or answered wrong: the run stops."""


class Proc:
    """A server subprocess; its stderr goes to a log file."""

    def __init__(
        self,
        argv: list[str],
        log: Path,
        *,
        pipes: bool,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = shlex.join(argv[1:] if argv[0] == sys.executable else argv)
        self.log_path = log
        self._log = log.open("wb")
        pipe = subprocess.PIPE if pipes else subprocess.DEVNULL
        self.popen = subprocess.Popen(
            argv,
            stdin=pipe,
            stdout=pipe,
            stderr=self._log,
            bufsize=0,
            cwd=REPO_ROOT,
            env=env,
        )
        self.pid = self.popen.pid

    def fail(self, message: str) -> ServerGone:
        tail = ""
        with contextlib.suppress(OSError):
            tail = self.log_path.read_text(errors="replace")[-2000:]
        return ServerGone(f"{self.name}: {message}\n--- its stderr (tail) ---\n{tail}")

    def status_kib(self, key: str) -> int | None:
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if row.startswith(key + ":"):
                    return int(row.split()[1])
        return None

    def peak_rss_mib(self) -> float:
        kib = self.status_kib("VmHWM")
        if kib is None:
            raise self.fail("no /proc status (did it exit?)")
        return kib / 1024

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process (all its threads) so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, grace: float = 10.0) -> None:
        popen = self.popen
        if popen.stdin is not None:
            with contextlib.suppress(OSError):
                popen.stdin.close()
        elif popen.poll() is None:
            popen.terminate()
        try:
            popen.wait(grace)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
        if popen.stdout is not None:
            popen.stdout.close()
        self._log.close()


@contextlib.contextmanager
def watchdog(proc: Proc, seconds: float, what: str) -> Iterator[None]:
    """Kill ``proc`` if the block takes longer than ``seconds`` (every loop is bounded)."""
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        proc.popen.kill()

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except (OSError, EOFError, ValueError) as exc:
        if fired.is_set():
            raise proc.fail(f"{what}: not done within {seconds:.0f} s, killed") from exc
        raise proc.fail(f"{what}: {exc!r}") from exc
    finally:
        timer.cancel()


class StdioPeer(Proc):
    """The client end of one stdio server: blocking pipe I/O, one line per message."""

    def __init__(
        self,
        spec: ServerSpec,
        era: str,
        logdir: Path,
        *,
        argv: list[str] | None = None,
        env: dict[str, str] | None = None,
        tag: str = "",
    ) -> None:
        log = logdir / f"stdio-{spec.key}-{era}{tag}-{time.monotonic_ns()}.log"
        super().__init__(argv or spec.argv("stdio"), log, pipes=True, env=env)
        self.spec, self.era = spec, era
        assert self.popen.stdin is not None
        assert self.popen.stdout is not None
        self.wfd = self.popen.stdin.fileno()
        self.rfd = self.popen.stdout.fileno()
        self.buf = bytearray()

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def read_line(self) -> bytes:
        buf = self.buf
        scanned = 0
        while True:
            end = buf.find(b"\n", scanned)
            if end >= 0:
                reply = bytes(buf[:end])
                del buf[: end + 1]
                return reply
            scanned = len(buf)
            chunk = os.read(self.rfd, 1 << 17)
            if not chunk:
                raise EOFError("the server closed stdout")
            buf += chunk

    def read_lines(self, n: int) -> None:
        """Read exactly ``n`` reply lines and drop them (pipelined bursts)."""
        if self.buf:
            raise ValueError("unread bytes before a burst")
        remaining = n
        while remaining > 0:
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise EOFError("the server closed stdout")
            remaining -= chunk.count(b"\n")
            if remaining <= 0 and not chunk.endswith(b"\n"):
                raise ValueError("more output than replies")
        if remaining < 0:
            raise ValueError(f"{-remaining} reply lines too many")

    def ask(self, message: dict[str, Any]) -> bytes:
        self.write(line(message))
        return self.read_line()

    def handshake(self) -> None:
        """Legacy era: ``initialize`` then ``notifications/initialized``."""
        if self.era == LEGACY:
            check_initialize(self.ask(INITIALIZE), self.spec.label)
            self.write(line(INITIALIZED))


# --------------------------------------------------------------------------------- checks


def result_of(raw: bytes | str, who: str, want_id: int) -> dict[str, Any]:
    return _common.result_of(raw, who, want_id, ServerGone)


def check_initialize(raw: bytes, who: str) -> None:
    _common.check_initialize(raw, who, ServerGone)


def check_echo(raw: bytes | str, who: str, want_id: int = 1) -> None:
    _common.check_echo(raw, who, ECHO_TEXT, want_id, ServerGone)


def check_list(raw: bytes, spec: ServerSpec, expected: list[dict[str, Any]]) -> int:
    """100 tools in one page; mcpgen's definitions where the server is given them.

    Returns the reply's size in bytes."""
    who = f"{spec.label} tools/list"
    result = result_of(raw, who, 2)
    tools = result.get("tools", [])
    if len(tools) != N_TOOLS or result.get("nextCursor"):
        raise ServerGone(f"{who}: {len(tools)} tools, not {N_TOOLS} in one page")
    if expected:
        same = _common.tool_projection(tools) == _common.tool_projection(expected)
        if spec.same_defs and not same:
            raise ServerGone(f"{who}: tool definitions differ from mcpgen's")
        if sorted(t["name"] for t in tools) != sorted(t["name"] for t in expected):
            raise ServerGone(f"{who}: tool names differ from mcpgen's")
    return len(raw)


# -------------------------------------------------------------------------------- results


@dataclass
class Series:
    """One (workload, era, server) cell: one value per repeat, plus side numbers."""

    values: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    extra: dict[str, list[float]] = field(default_factory=dict)

    def add_extra(self, key: str, value: float) -> None:
        self.extra.setdefault(key, []).append(value)


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    unit: str
    higher_is_better: bool


STDIO_CALL: Final = Workload("stdio-call", "stdio tools/call, closed loop", "req/s", True)
STDIO_BURST: Final = Workload("stdio-burst", "stdio tools/call, pipelined burst", "req/s", True)
STDIO_LIST: Final = Workload("stdio-list", "stdio tools/list (100 tools)", "req/s", True)
STDIO_WORKLOADS: Final = (STDIO_CALL, STDIO_BURST, STDIO_LIST)
HTTP_WORKLOADS: Final = {
    c: Workload(f"http-{c}", f"HTTP tools/call, {c} connection{'s' * (c > 1)}", "req/s", True)
    for c in CONCURRENCY
}
COLD: Final = Workload("cold", "cold start to first tools/list reply", "ms", False)
IMPORT: Final = Workload("import", "import time", "ms", False)
RSS_STDIO: Final = Workload("rss-stdio", "peak RSS, stdio", "MiB", False)
RSS_HTTP: Final = Workload("rss-http", "peak RSS, HTTP", "MiB", False)
INSTR: Final = Workload("instr", "instructions per stdio tools/call", "Ir", False)
INSTR_LIST: Final = Workload("instr-list", "instructions per stdio tools/list", "Ir", False)


class Results:
    def __init__(self) -> None:
        self.cells: dict[tuple[str, str, str], Series] = {}
        self.notes: dict[str, Any] = {}

    def cell(self, workload: Workload, era: str, server: ServerSpec) -> Series:
        return self.cells.setdefault((workload.key, era, server.key), Series())

    def get(self, workload: Workload, era: str, server: ServerSpec) -> Series | None:
        series = self.cells.get((workload.key, era, server.key))
        return series if series is not None and series.values else None

    def as_json(self) -> dict[str, Any]:
        return {
            "cells": [
                {"workload": w, "era": e, "server": s, **vars(series)}
                for (w, e, s), series in self.cells.items()
            ],
            "notes": self.notes,
        }


def advantage(workload: Workload, ours: float, other: float) -> float:
    """How many times better mcpgen is than ``other`` (> 1: mcpgen is better)."""
    return ours / other if workload.higher_is_better else other / ours


@dataclass(frozen=True)
class Ratio:
    of_medians: float
    paired: float  # median of the per-repeat ratios
    low: float
    high: float

    @property
    def worst(self) -> float:
        return min(self.of_medians, self.paired)


def ratio(results: Results, workload: Workload, era: str, other: ServerSpec) -> Ratio | None:
    ours = results.get(workload, era, MCPGEN)
    theirs = results.get(workload, era, other)
    if ours is None or theirs is None:
        return None
    of_medians = advantage(
        workload, statistics.median(ours.values), statistics.median(theirs.values)
    )
    pairs = [advantage(workload, a, b) for a, b in zip(ours.values, theirs.values, strict=False)]
    return Ratio(of_medians, statistics.median(pairs), min(pairs), max(pairs))


# ------------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    mode: str  # "full" or "quick"
    repeats: int
    stdio_seconds: float  # per server, workload, era and repeat
    stdio_slices: int  # the servers take turns in this many slices of it
    stdio_warmup_calls: int
    http_seconds: int  # per wrk run (wrk takes whole seconds)
    http_passes: int  # wrk runs per server, workload and repeat, servers taking turns
    http_warmup_calls: int
    http_runs: tuple[tuple[int, str], ...]  # (connections, era)
    cold_repeats: int
    cold_eras: tuple[str, ...]
    # (server, era, "call" or "list", n1, n2)
    callgrind: tuple[tuple[ServerSpec, str, str, int, int], ...]
    callgrind_warmup: int


def _all_http() -> tuple[tuple[int, str], ...]:
    return tuple((c, era) for c in CONCURRENCY for era in ERAS)


def _plans(
    kind: str, eras: tuple[str, ...], *sized: tuple[ServerSpec, int, int]
) -> tuple[tuple[ServerSpec, str, str, int, int], ...]:
    """callgrind runs of ``kind`` for each (server, N1, N2) of ``sized``, in each era."""
    return tuple((spec, era, kind, n1, n2) for spec, n1, n2 in sized for era in eras)


FULL: Final = Settings(
    mode="full",
    repeats=5,
    stdio_seconds=1.0,
    stdio_slices=10,
    stdio_warmup_calls=300,
    http_seconds=1,
    http_passes=2,
    http_warmup_calls=300,
    http_runs=_all_http(),
    cold_repeats=7,
    cold_eras=ERAS,
    callgrind=(
        *_plans(
            "call",
            ERAS,
            (LOWLEVEL, 300, 600),
            (MCPSERVER, 200, 400),
            (MCPGEN, 1000, 3000),
            (CEILING, 1000, 3000),
        ),
        *_plans("list", ERAS, (MCPGEN, 300, 900), (CEILING, 300, 900)),
    ),
    callgrind_warmup=200,
)
QUICK: Final = Settings(
    mode="quick",
    repeats=3,
    stdio_seconds=0.3,
    stdio_slices=3,
    stdio_warmup_calls=100,
    http_seconds=1,
    http_passes=1,
    http_warmup_calls=50,
    http_runs=((16, MODERN), (16, LEGACY), (64, MODERN)),
    cold_repeats=3,
    cold_eras=(MODERN,),
    callgrind=(
        *_plans("call", (MODERN,), (LOWLEVEL, 60, 120)),
        *_plans("call", ERAS, (MCPGEN, 500, 1000)),
        *_plans("call", (MODERN,), (CEILING, 500, 1000)),
        *_plans("list", (MODERN,), (MCPGEN, 200, 400), (CEILING, 200, 400)),
    ),
    callgrind_warmup=100,
)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """The harness's own garbage collector off while a sample runs, after a collection."""
    gc.collect()
    with _common.collector():
        yield


# ---------------------------------------------------------------------------------- stdio


@dataclass(frozen=True)
class Sample:
    rate: float
    p50_us: float | None = None
    p99_us: float | None = None


@dataclass
class Tally:
    """What one server did in one repeat of a workload, summed over its slices."""

    requests: int = 0
    busy_ns: int = 0
    latencies: list[int] = field(default_factory=list)

    def sample(self) -> Sample:
        rate = self.requests * 1e9 / self.busy_ns
        if not self.latencies:
            return Sample(rate)
        cuts = statistics.quantiles(self.latencies, n=100, method="inclusive")
        return Sample(rate, cuts[49] / 1e3, cuts[98] / 1e3)


def closed_loop(peer: StdioPeer, request: bytes, seconds: float, tally: Tally) -> None:
    """Write one request, read its reply, repeat for ``seconds`` (one in flight)."""
    write, read, clock = peer.write, peer.read_line, time.perf_counter_ns
    latencies = tally.latencies
    append = latencies.append
    count = len(latencies)
    start = now = clock()
    end = start + int(seconds * 1e9)
    limit = count + 1_000_000
    while now < end and len(latencies) < limit:
        before = clock()
        write(request)
        read()
        now = clock()
        append(now - before)
    tally.requests += len(latencies) - count
    tally.busy_ns += now - start


_burst_cache: dict[tuple[str, int], bytes] = {}


def burst_payload(era: str, n: int) -> bytes:
    key = (era, n)
    if key not in _burst_cache:
        _burst_cache.clear()
        _burst_cache[key] = b"".join(line(call_request(i, era)) for i in range(1, n + 1))
    return _burst_cache[key]


def pipelined(peer: StdioPeer, n: int, tally: Tally) -> None:
    """One thread writes ``n`` requests while this one reads the ``n`` replies."""
    payload = burst_payload(peer.era, n)
    failure: list[BaseException] = []

    def writer() -> None:
        try:
            peer.write(payload)
        except OSError as exc:
            failure.append(exc)

    thread = threading.Thread(target=writer, daemon=True)
    start = time.perf_counter_ns()
    thread.start()
    peer.read_lines(n)
    elapsed = time.perf_counter_ns() - start
    thread.join()
    if failure:
        raise failure[0]
    tally.requests += n
    tally.busy_ns += elapsed


def check_burst(peer: StdioPeer, n: int = 64) -> None:
    """A burst's replies: one per request, each id once, each echo right."""
    peer.write(burst_payload(peer.era, n))
    seen = set()
    for _ in range(n):
        raw = peer.read_line()
        rid = json.loads(raw).get("id")
        check_echo(raw, f"{peer.spec.label} burst", rid)
        seen.add(rid)
    if seen != set(range(1, n + 1)):
        raise peer.fail("pipelined replies do not match the request ids")


def stdio_phase(
    settings: Settings, results: Results, logdir: Path, expected: dict[str, list[Any]]
) -> None:
    call = {era: line(call_request(1, era)) for era in ERAS}
    listing = {era: line(list_request(2, era)) for era in ERAS}
    burst_n: dict[tuple[str, str], int] = {}
    slice_s = settings.stdio_seconds / settings.stdio_slices
    for repeat in range(settings.repeats):
        progress(f"stdio: repeat {repeat + 1}/{settings.repeats}: starting 8 servers")
        peers = {(s.key, era): StdioPeer(s, era, logdir) for s in SERVERS for era in ERAS}
        try:
            for (key, era), peer in peers.items():
                with watchdog(peer, 120, f"check/warm-up ({era})"):
                    peer.handshake()
                    if key == MCPGEN.key and not expected.get(era):
                        expected[era] = result_of(peer.ask(list_request(2, era)), "mcpgen", 2)[
                            "tools"
                        ]
                    check_echo(peer.ask(call_request(1, era)), peer.spec.label)
                    size = check_list(peer.ask(list_request(2, era)), peer.spec, expected[era])
                    results.notes.setdefault("list_bytes", {})[f"{key} {era}"] = size
                    check_burst(peer)
                    for _ in range(settings.stdio_warmup_calls):
                        peer.write(call[era])
                        peer.read_line()
                    if (key, era) not in burst_n:
                        probe = Tally()
                        pipelined(peer, 300, probe)
                        n = round(probe.sample().rate * slice_s)
                        burst_n[key, era] = max(150, min(100_000, n))
            for workload in STDIO_WORKLOADS:
                for era in ERAS:
                    tallies = {spec.key: Tally() for spec in SERVERS}
                    for piece in range(settings.stdio_slices):
                        for spec in in_turn(repeat + piece):
                            peer, tally = peers[spec.key, era], tallies[spec.key]
                            what = f"{workload.label} ({era})"
                            with watchdog(peer, 60 + 30 * slice_s, what), collector_off():
                                if workload is STDIO_CALL:
                                    closed_loop(peer, call[era], slice_s, tally)
                                elif workload is STDIO_LIST:
                                    closed_loop(peer, listing[era], slice_s, tally)
                                else:
                                    pipelined(peer, burst_n[spec.key, era], tally)
                    for spec in SERVERS:
                        sample = tallies[spec.key].sample()
                        series = results.cell(workload, era, spec)
                        series.values.append(sample.rate)
                        if sample.p50_us is not None and sample.p99_us is not None:
                            series.p50.append(sample.p50_us)
                            series.p99.append(sample.p99_us)
            for (key, era), peer in peers.items():
                spec = next(s for s in SERVERS if s.key == key)
                results.cell(RSS_STDIO, era, spec).values.append(peer.peak_rss_mib())
        finally:
            for peer in peers.values():
                peer.stop()
    results.notes["burst_n"] = {f"{k} {e}": n for (k, e), n in burst_n.items()}


# ----------------------------------------------------------------------------------- HTTP


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


BASE_HEADERS: Final = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def body_json(raw: bytes, content_type: str) -> bytes:
    """The JSON-RPC message of an HTTP reply body (JSON, or the last SSE data event)."""
    if not content_type.startswith("text/event-stream"):
        return raw
    events = [
        row[5:].strip()
        for row in raw.decode().splitlines()
        if row.startswith("data:") and row[5:].strip()
    ]
    return events[-1].encode() if events else b""


class HttpPeer(Proc):
    def __init__(self, spec: ServerSpec, logdir: Path) -> None:
        self.spec = spec
        self.port = free_port()
        log = logdir / f"http-{spec.key}-{time.monotonic_ns()}.log"
        argv = spec.argv("http", "--host", HOST, "--port", str(self.port))
        super().__init__(argv, log, pipes=False)
        self.url = f"http://{HOST}:{self.port}/mcp"
        self.session_id = ""
        self.conn: http.client.HTTPConnection | None = None

    def wait_ready(self, seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise self.fail(f"exited with {self.popen.returncode} before listening")
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 0.5):
                return
            time.sleep(0.05)
        raise self.fail(f"not listening after {seconds:.0f} s")

    def post(self, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
        self.conn.request("POST", "/mcp", body=compact(message), headers=headers)
        response = self.conn.getresponse()
        raw = response.read()
        return response.status, response.headers, raw

    def headers(self, era: str) -> dict[str, str]:
        if era == MODERN:
            return {
                **BASE_HEADERS,
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "echo",
            }
        return {**BASE_HEADERS, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": self.session_id}

    def echo(self, era: str) -> None:
        status, headers, raw = self.post(call_request(1, era), self.headers(era))
        if status != 200:
            raise self.fail(f"tools/call ({era}) got HTTP {status}: {raw[:300]!r}")
        check_echo(body_json(raw, headers.get("content-type", "")), f"{self.spec.label} HTTP")

    def prepare(self, warmup_calls: int) -> None:
        """Check both eras (opening the legacy session), then warm up."""
        status, headers, raw = self.post(INITIALIZE, BASE_HEADERS)
        if status != 200:
            raise self.fail(f"initialize got HTTP {status}: {raw[:300]!r}")
        check_initialize(body_json(raw, headers.get("content-type", "")), self.spec.label)
        self.session_id = headers.get("mcp-session-id", "")
        if not self.session_id:
            raise self.fail("initialize gave no Mcp-Session-Id")
        status, _, raw = self.post(INITIALIZED, self.headers(LEGACY))
        if status not in {200, 202, 204}:
            raise self.fail(f"notifications/initialized got HTTP {status}: {raw[:300]!r}")
        for era in ERAS:
            for _ in range(warmup_calls):
                self.echo(era)
        if self.conn is not None:
            self.conn.close()
            self.conn = None


WRK_ERRORS: Final = ("connect", "read", "write", "status", "timeout")


@dataclass(frozen=True)
class WrkSample:
    requests: int
    seconds: float
    p50_us: float
    p99_us: float
    errors: dict[str, int]  # wrk's socket errors and non-2xx replies, by kind
    wrk_cpu: float  # of one core
    server_cpu: float  # of one core


def run_wrk(peer: HttpPeer, era: str, connections: int, seconds: int) -> WrkSample:
    env = {
        **os.environ,
        "MCP_BODY": compact(call_request(1, era)).decode(),
        "MCP_HEADERS": "\n".join(f"{k}: {v}" for k, v in peer.headers(era).items()),
    }
    argv = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
        "-s",
        str(WRK_SCRIPT),
        peer.url,
    ]
    cpu_before = peer.cpu_seconds()
    start = time.perf_counter()
    wrk = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    timer = threading.Timer(seconds + 60, wrk.kill)
    timer.start()
    try:
        assert wrk.stdout is not None
        output = wrk.stdout.read().decode(errors="replace")
        _, status, usage = os.wait4(wrk.pid, 0)
    finally:
        timer.cancel()
    wrk.returncode = os.waitstatus_to_exitcode(status)
    wrk.stdout.close()
    wall = time.perf_counter() - start
    server_cpu = peer.cpu_seconds() - cpu_before
    found = re.search(r"^mcp-wrk-result (\{.*\})$", output, re.MULTILINE)
    if wrk.returncode != 0 or found is None:
        raise peer.fail(f"wrk failed ({wrk.returncode}):\n{output[-2000:]}")
    summary = json.loads(found.group(1))
    errors = {k: summary[k] for k in WRK_ERRORS}
    duration = summary["duration_us"] / 1e6
    return WrkSample(
        requests=summary["requests"],
        seconds=duration,
        p50_us=summary["p50_us"],
        p99_us=summary["p99_us"],
        errors=errors,
        wrk_cpu=(usage.ru_utime + usage.ru_stime) / duration,
        server_cpu=server_cpu / wall,
    )


def http_phase(settings: Settings, results: Results, logdir: Path) -> None:
    for repeat in range(settings.repeats):
        progress(f"HTTP: repeat {repeat + 1}/{settings.repeats}: starting 4 servers")
        peers = {spec.key: HttpPeer(spec, logdir) for spec in SERVERS}
        try:
            for peer in peers.values():
                peer.wait_ready()
            for peer in peers.values():
                peer.prepare(settings.http_warmup_calls)
            for connections, era in settings.http_runs:
                workload = HTTP_WORKLOADS[connections]
                samples: dict[str, list[WrkSample]] = {spec.key: [] for spec in SERVERS}
                for turn in range(settings.http_passes):
                    for spec in in_turn(repeat + turn):
                        samples[spec.key].append(
                            run_wrk(peers[spec.key], era, connections, settings.http_seconds)
                        )
                for spec in SERVERS:
                    record_wrk(results.cell(workload, era, spec), samples[spec.key])
            for spec in SERVERS:
                rss = peers[spec.key].peak_rss_mib()
                results.cell(RSS_HTTP, "any", spec).values.append(rss)
        finally:
            stop_all(list(peers.values()))


def record_wrk(series: Series, passes: list[WrkSample]) -> None:
    """One repeat's figures from its wrk passes: requests over time, summed."""
    series.values.append(sum(p.requests for p in passes) / sum(p.seconds for p in passes))
    series.p50.append(statistics.median(p.p50_us for p in passes))
    series.p99.append(max(p.p99_us for p in passes))
    for kind in WRK_ERRORS:
        series.add_extra(kind, sum(p.errors[kind] for p in passes))
    series.add_extra("wrk_cpu", max(p.wrk_cpu for p in passes))
    series.add_extra("server_cpu", statistics.mean(p.server_cpu for p in passes))


def stop_all(peers: Sequence[Proc]) -> None:
    """SIGTERM to every server at once, then wait (the official servers' graceful
    shutdown waits seconds for their sessions; nothing is timed any more)."""
    for peer in peers:
        if peer.popen.poll() is None:
            peer.popen.terminate()
    for peer in peers:
        peer.stop(grace=6.0)


# ------------------------------------------------------------------- cold start and imports


def cold_start(spec: ServerSpec, era: str, logdir: Path, expected: list[Any]) -> float:
    """Milliseconds from ``Popen`` to the full first ``tools/list`` reply."""
    request = line(list_request(2, era))
    if era == LEGACY:
        request = line(INITIALIZE) + line(INITIALIZED) + request
    start = time.perf_counter_ns()
    peer = StdioPeer(spec, era, logdir, tag="-cold")
    try:
        with watchdog(peer, 120, f"cold start ({era})"):
            peer.write(request)
            if era == LEGACY:
                first = peer.read_line()
            reply = peer.read_line()
            elapsed = time.perf_counter_ns() - start
            if era == LEGACY:
                check_initialize(first, spec.label)
            check_list(reply, spec, expected)
    finally:
        peer.stop()
    return elapsed / 1e6


def import_ms(spec: ServerSpec) -> float:
    code = "import time\n_t = time.perf_counter()\n" + spec.imports
    code += "print(time.perf_counter() - _t)\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise ServerGone(f"{spec.label}: the import-time probe failed:\n{done.stderr[-1500:]}")
    return float(done.stdout.split()[-1]) * 1e3


def interpreter_ms() -> float:
    start = time.perf_counter_ns()
    subprocess.run([sys.executable, "-c", "pass"], check=True, cwd=REPO_ROOT)
    return (time.perf_counter_ns() - start) / 1e6


def startup_phase(
    settings: Settings, results: Results, logdir: Path, expected: dict[str, list[Any]]
) -> None:
    progress("cold start and import time")
    for spec in SERVERS:  # once untimed: bytecode caches and the page cache are warm
        cold_start(spec, MODERN, logdir, expected[MODERN])
    bare = []
    for repeat in range(settings.cold_repeats):
        bare.append(interpreter_ms())
        for spec in in_turn(repeat):
            for era in settings.cold_eras:
                ms = cold_start(spec, era, logdir, expected[era])
                results.cell(COLD, era, spec).values.append(ms)
            results.cell(IMPORT, "any", spec).values.append(import_ms(spec))
    results.notes["interpreter_ms"] = statistics.median(bare)


# -------------------------------------------------------------------------------- callgrind

_TOTALS = re.compile(rb"^totals:\s+(\d+)", re.MULTILINE)


def callgrind_control(*args: str) -> None:
    done = subprocess.run(
        ["callgrind_control", *args], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0 or "OK" not in done.stdout:
        raise ServerGone(f"callgrind_control {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def callgrind_run(
    spec: ServerSpec, era: str, kind: str, n1: int, n2: int, warmup: int, logdir: Path
) -> tuple[float, float]:
    """Instructions per request: (I2 - I1) / (N2 - N1), and I2 / N2 as a check."""
    out = logdir / f"callgrind.{spec.key}.{era}.{kind}.%p"
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        *spec.argv("stdio"),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    peer = StdioPeer(spec, era, logdir, argv=argv, env=env, tag="-callgrind")
    request = line(call_request(1, era) if kind == "call" else list_request(2, era))

    def calls(n: int) -> None:
        for _ in range(n):
            peer.write(request)
            peer.read_line()

    try:
        with watchdog(peer, 1200, f"callgrind ({era})"):
            peer.handshake()
            check_echo(peer.ask(call_request(1, era)), f"{spec.label} under callgrind")
            check_list(peer.ask(list_request(2, era)), spec, [])
            calls(warmup)
            callgrind_control("--instr=on", str(peer.pid))
            calls(n1)
            callgrind_control("--dump", str(peer.pid))
            calls(n2)
            callgrind_control("--dump", str(peer.pid))
    finally:
        peer.stop(grace=300)
    totals = []
    for part in (1, 2):
        path = Path(str(out).replace("%p", str(peer.pid)) + f".{part}")
        found = _TOTALS.search(path.read_bytes())
        if found is None:
            raise ServerGone(f"{path}: no totals line")
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / (n2 - n1), totals[1] / n2


def callgrind_phase(settings: Settings, results: Results, logdir: Path) -> None:
    progress(f"callgrind: {len(settings.callgrind)} runs, two at a time")
    plans = settings.callgrind

    def one(plan: tuple[ServerSpec, str, str, int, int]) -> None:
        spec, era, kind, n1, n2 = plan
        warmup = settings.callgrind_warmup
        per_call, check = callgrind_run(spec, era, kind, n1, n2, warmup, logdir)
        series = results.cell(INSTR if kind == "call" else INSTR_LIST, era, spec)
        series.values.append(per_call)
        series.add_extra("segment_average", check)
        series.add_extra("calls", n2 - n1)
        progress(f"callgrind: {spec.label} {era} {kind}: {per_call:,.0f} Ir per request")

    with ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(one, plan) for plan in plans]:
            future.result()


# ---------------------------------------------------------------------------- environment


def _tool_version(argv: list[str]) -> str:
    if shutil.which(argv[0]) is None:
        return "not installed"
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0] if text else "unknown"


@dataclass(frozen=True)
class Environment(_common.Environment):
    """The run's machine and kernel, the versions of the servers' packages (read from
    their metadata: nothing the servers use is imported here), wrk's and valgrind's."""

    kernel: str
    versions: dict[str, str]
    wrk: str
    valgrind: str

    @classmethod
    def current(cls, argv: list[str]) -> Environment:
        names = [
            "mcpgen",
            "msgspec",
            "mcp",
            "mcp-types",
            "pydantic",
            "pydantic-core",
            "anyio",
            "starlette",
            "uvicorn",
            "uvloop",
            "httptools",
            "opentelemetry-api",
        ]
        return cls.collect(
            argv,
            "bench/suite.py",
            kernel=platform.release(),
            versions={name: _common.version(name) for name in names},
            wrk=_tool_version(["wrk", "--version"]).split(" Copyright")[0],
            valgrind=_tool_version(["valgrind", "--version"]),
        )

    def versions_line(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in self.versions.items())


# --------------------------------------------------------------------------------- report


def _num(value: float, unit: str) -> str:
    if unit == "Ir":
        return f"{value / 1e6:.3f} M" if value >= 1e6 else f"{value / 1e3:,.1f} k"
    if unit in {"ms", "MiB"}:
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def _lat(us: float) -> str:
    return f"{us / 1e3:.2f} ms" if us >= 1000 else f"{us:.0f} µs"


def value_cell(results: Results, workload: Workload, era: str, spec: ServerSpec) -> str:
    series = results.get(workload, era, spec)
    if series is None:
        return "-"
    text = _num(statistics.median(series.values), workload.unit)
    if series.p50:
        p50, p99 = statistics.median(series.p50), statistics.median(series.p99)
        text += f" ({_lat(p50)} / {_lat(p99)})"
    errors = {k: sum(series.extra.get(k, [])) for k in WRK_ERRORS}
    if any(errors.values()):
        listed = ", ".join(f"{n:.0f} {k}" for k, n in errors.items() if n)
        text += f" **errors: {listed}**"
    return text


def ratio_cell(r: Ratio | None, *, percent: bool, single: bool = False) -> str:
    if r is None:
        return "-"
    if percent:
        head = f"{100 * r.of_medians:.0f}%"
        return head if single else f"{head} (paired {100 * r.paired:.0f}%)"
    head = f"{r.of_medians:.2f}x" if r.of_medians < 10 else f"{r.of_medians:.1f}x"
    if single:
        return head
    paired = f"{r.paired:.2f}x" if r.paired < 10 else f"{r.paired:.1f}x"
    return f"{head} (paired {paired}, {r.low:.1f}-{r.high:.1f})"


RATIO_HEADER: Final = ("mcpgen vs low-level", "mcpgen vs MCPServer", "mcpgen / ceiling")


def comparison_rows(
    results: Results, workloads: Sequence[tuple[Workload, str]], *, single: bool = False
) -> list[list[str]]:
    rows = []
    for workload, era in workloads:
        if results.get(workload, era, MCPGEN) is None:
            continue
        rows.append(
            [
                workload.label,
                era_label(era) if era != "any" else "both",
                *(value_cell(results, workload, era, s) for s in SERVERS),
                ratio_cell(ratio(results, workload, era, LOWLEVEL), percent=False, single=single),
                ratio_cell(ratio(results, workload, era, MCPSERVER), percent=False, single=single),
                ratio_cell(ratio(results, workload, era, CEILING), percent=True, single=single),
            ]
        )
    return rows


SERVER_HEADER: Final = tuple(s.label for s in SERVERS)


@dataclass(frozen=True)
class Target:
    label: str
    met: bool | None  # None: not measured in this run
    detail: str


def ratio_target(
    results: Results,
    workload: Workload,
    era: str,
    other: ServerSpec,
    goal: float,
    what: str,
    instr: Workload | None = None,
) -> Target:
    r = ratio(results, workload, era, other)
    label = f"{workload.label}, {era_label(era)}: {what}"
    if r is None:
        return Target(label, None, "not measured in this run")
    if other is CEILING:
        detail = f"{100 * r.of_medians:.0f}% of the ceiling (paired {100 * r.paired:.0f}%)"
    else:
        detail = f"{r.of_medians:.2f}x (paired {r.paired:.2f}x)"
    by_instr = ratio(results, instr, era, other) if instr is not None else None
    if by_instr is not None:
        share = f"{100 * by_instr.of_medians:.0f}%" if other is CEILING else ""
        share = share or f"{by_instr.of_medians:.1f}x"
        detail += f"; by callgrind instructions {share}"
    if any(has_errors(results.get(workload, era, s)) for s in (MCPGEN, other)):
        return Target(label, None, detail + "; wrk saw errors, so the run does not count")
    return Target(label, r.worst >= goal, detail)


def has_errors(series: Series | None) -> bool:
    return series is not None and any(sum(series.extra.get(k, [])) for k in WRK_ERRORS)


def targets(results: Results) -> list[Target]:
    out = []
    for era in ERAS:
        out += [
            ratio_target(results, STDIO_CALL, era, LOWLEVEL, 8, ">= 8x official", INSTR),
            ratio_target(
                results, STDIO_CALL, era, CEILING, 0.85, ">= 85% of the raw ceiling", INSTR
            ),
            ratio_target(results, STDIO_BURST, era, LOWLEVEL, 20, ">= 20x official", INSTR),
            ratio_target(results, STDIO_LIST, era, LOWLEVEL, 3, ">= 3x official"),
            ratio_target(
                results, STDIO_LIST, era, CEILING, 0.85, ">= 85% of the raw ceiling", INSTR_LIST
            ),
        ]
    http16 = HTTP_WORKLOADS[16]
    out += [
        ratio_target(results, http16, MODERN, LOWLEVEL, 5, ">= 5x official"),
        ratio_target(results, http16, MODERN, CEILING, 0.70, ">= 70% of the raw ASGI ceiling"),
    ]
    for era in ERAS:
        r = ratio(results, INSTR, era, LOWLEVEL)
        label = f"callgrind instructions per stdio tools/call, {era_label(era)}: <= 1/7 official"
        if r is None:
            out.append(Target(label, None, "not measured in this run"))
        else:
            ours = statistics.median(results.cell(INSTR, era, MCPGEN).values)
            detail = f"{ours / 1e3:,.1f} k, 1/{r.of_medians:.1f} of official"
            out.append(Target(label, r.of_medians >= 7, detail))
    for era in ERAS:
        series = results.get(COLD, era, MCPGEN)
        label = f"cold start, {era_label(era)}: <= 150 ms"
        if series is None:
            out.append(Target(label, None, "not measured in this run"))
        else:
            ms = statistics.median(series.values)
            out.append(Target(label, ms <= 150, f"{ms:.0f} ms (median)"))
    for workload, era, what in ((RSS_STDIO, MODERN, "stdio"), (RSS_STDIO, LEGACY, "stdio")):
        series = results.get(workload, era, MCPGEN)
        label = f"peak RSS, {what} {era_label(era)}: <= 30 MiB"
        if series is None:
            out.append(Target(label, None, "not measured in this run"))
        else:
            mib = max(series.values)
            out.append(Target(label, mib <= 30, f"{mib:.2f} MiB (max over repeats)"))
    series = results.get(RSS_HTTP, "any", MCPGEN)
    if series is not None:
        mib = max(series.values)
        out.append(
            Target(
                "peak RSS, HTTP (uvicorn): <= 30 MiB",
                mib <= 30,
                f"{mib:.2f} MiB (max over repeats)",
            )
        )
    return out


def _verdict(target: Target) -> str:
    if target.met is None:
        return "not measured" if "not measured" in target.detail else "**invalid**"
    return "met" if target.met else "**not met**"


def cpu_rows(results: Results, settings: Settings) -> list[list[str]]:
    rows = []
    for connections, era in settings.http_runs:
        workload = HTTP_WORKLOADS[connections]
        cells = []
        for spec in SERVERS:
            series = results.get(workload, era, spec)
            if series is None:
                cells.append("-")
                continue
            server = statistics.median(series.extra["server_cpu"])
            wrk = max(series.extra["wrk_cpu"])
            cells.append(f"{100 * server:.0f}% / {100 * wrk:.0f}%")
        rows.append([workload.label, era_label(era), *cells])
    return rows


def body(results: Results, settings: Settings, env: Environment) -> list[str]:
    """The report (Markdown), shared by the console and the doc section."""
    out: list[str] = [
        "### Targets",
        "",
        "The issue's targets (ratios in the same run). A wall-clock ratio target is met when "
        "both the ratio of the medians and the median paired ratio reach it; the callgrind "
        "ratio shown beside some is the noise-free yardstick, for reading, not part of the "
        "verdict.",
        "",
    ]
    out += md_table(
        ("target", "mcpgen", "verdict"),
        [(t.label, t.detail, _verdict(t)) for t in targets(results)],
        3,
    )
    header = ("workload", "era", *SERVER_HEADER, *RATIO_HEADER)
    out += [
        "",
        "### stdio",
        "",
        "Requests/s, median over repeats; in brackets p50 / p99 latency of one request "
        "(closed loops only: a pipelined burst queues by design). Ratios: mcpgen's "
        "throughput over the other's (ratio of the medians; paired = median and range of "
        "the per-repeat ratios).",
        "",
    ]
    stdio = [(w, era) for w in STDIO_WORKLOADS for era in ERAS]
    out += md_table(header, comparison_rows(results, stdio), 2)
    http_runs = [(HTTP_WORKLOADS[c], era) for c, era in settings.http_runs]
    out += [
        "",
        "### Streamable HTTP (uvicorn, one worker, 127.0.0.1)",
        "",
        "Requests/s from wrk (one thread, keep-alive connections), median over repeats; "
        "in brackets wrk's p50 / p99 latency.",
        "",
    ]
    out += md_table(header, comparison_rows(results, http_runs), 2)
    out += [
        "",
        "CPU use during the wrk runs, as a share of one core: the server process (median) "
        "/ wrk itself (highest sample). A server near 100% is the bottleneck; wrk stays far "
        "below it, so it is not.",
        "",
    ]
    out += md_table(("workload", "era", *SERVER_HEADER), cpu_rows(results, settings), 2)
    out += [
        "",
        "### Start-up and memory",
        "",
        "Cold start: `Popen` to the complete first `tools/list` reply (legacy: after "
        "`initialize`), the requests written at once; median. Import time: the server's "
        "own imports in a fresh interpreter (`time.perf_counter` around them); median. "
        f"A bare `python -c pass` takes {results.notes.get('interpreter_ms', 0):.0f} ms "
        "here. Peak RSS: `VmHWM` of the server process after all its workloads, highest "
        "over repeats.",
        "",
    ]
    startup = [(COLD, MODERN), (COLD, LEGACY), (IMPORT, "any")]
    rows = comparison_rows(results, startup)
    for workload, era in ((RSS_STDIO, MODERN), (RSS_STDIO, LEGACY), (RSS_HTTP, "any")):
        if results.get(workload, era, MCPGEN) is None:
            continue
        cells = [
            f"{max(s.values):.1f}" if (s := results.get(workload, era, spec)) else "-"
            for spec in SERVERS
        ]
        ours = max(results.cell(workload, era, MCPGEN).values)
        ratios = [
            f"{max(results.cell(workload, era, spec).values) / ours:.2f}x less"
            if results.get(workload, era, spec)
            else "-"
            for spec in (LOWLEVEL, MCPSERVER)
        ]
        ceiling = results.get(workload, era, CEILING)
        share = f"{100 * max(ceiling.values) / ours:.0f}%" if ceiling else "-"
        rows.append(
            [
                f"{workload.label} (MiB)",
                era_label(era) if era != "any" else "both",
                *cells,
                *ratios,
                share,
            ]
        )
    for row in rows:
        if row[0] in {COLD.label, IMPORT.label}:
            row[0] += " (ms)"
    out += md_table(("measure", "era", *SERVER_HEADER, *RATIO_HEADER), rows, 2)
    out += [
        "",
        "### Instructions per stdio request (callgrind)",
        "",
        "Instructions (Ir) the server process executes per `tools/call` of `echo` (and, "
        "for mcpgen and the ceiling, per `tools/list`) on stdio, from two dumped segments "
        "of N1 and N2 requests after a warm-up: (I2 - I1) / (N2 - N1). Repeatable to a "
        "fraction of a percent on this noisy machine, so it is the yardstick where the "
        "wall clock is too noisy to tell. Ratios: the other's count over mcpgen's "
        "(ceiling: its count over mcpgen's).",
        "",
    ]
    instr = [(INSTR, era) for era in ERAS] + [(INSTR_LIST, era) for era in ERAS]
    out += md_table(header, comparison_rows(results, instr, single=True), 2)
    calls = {
        f"{spec.label} {'list' if w == INSTR_LIST.key else 'call'} {era_label(era)}: "
        f"{series.extra['calls'][0]:.0f} requests, "
        f"I2/N2 {series.extra['segment_average'][0] / 1e3:,.1f} k"
        for (w, era, key), series in results.cells.items()
        if w in {INSTR.key, INSTR_LIST.key}
        for spec in SERVERS
        if spec.key == key
    }
    out += ["", "Segment sizes and checks: " + "; ".join(sorted(calls)) + "."]
    return out


def methods_notes(settings: Settings, env: Environment, results: Results) -> list[str]:
    burst = results.notes.get("burst_n", {})
    sizes = results.notes.get("list_bytes", {})
    return [
        "### How it was measured",
        "",
        "- Servers under test, all run by the benchmark venv's python as subprocesses, "
        "with the same surface (`echo(text)`, `add(a, b)`, `tool_002` .. `tool_099`; 100 "
        "tools in one `tools/list` page):",
        "  - mcpgen: `examples/bench_server.py` (stdio on uvloop, as `Server.run` does "
        "when uvloop is installed); its tools never block and are declared "
        "`threaded=False`, so they run on the event loop as every sync handler did "
        "before worker threads became the default (a sync tool in a worker thread "
        "costs about 124 k instructions per stdio call instead of 61 k: "
        "docs/guide/lifespan-and-threads.md);",
        "  - official low-level: `bench/servers/official_lowlevel.py`, "
        "`mcp.server.lowlevel.Server` with `on_list_tools` (a prebuilt "
        "`ListToolsResult` per era) and `on_call_tool` (a dict of handlers); stdio: "
        "`stdio_server()` + `Server.run` under `anyio.run` (asyncio, as the SDK's "
        "docstring shows); HTTP: `streamable_http_app(json_response=True)`. Its tool "
        "definitions are checked identical to mcpgen's;",
        "  - official MCPServer: `bench/servers/official_mcpserver.py`, plain typed "
        "functions with `@mcp.tool(...)` (`structured_output=False` for `echo` and "
        "`tool_NNN` so the replies carry the same content as mcpgen's); stdio: "
        "`MCPServer.run()`; HTTP: `streamable_http_app(json_response=True)`. It runs "
        "sync tools in a worker thread (`anyio.to_thread`), as shipped; its pydantic "
        "schemas differ from mcpgen's in detail (titles), not in tools;",
        "  - raw ceiling: `bench/servers/raw_ceiling.py`, `json.loads` of each message and "
        "a canned reply with the request's id (stdio: asyncio pipe transports on uvloop; "
        "HTTP: a bare ASGI app). Its `tools/list` reply lists the same 100 definitions.",
        "- HTTP: every server under `uvicorn.Config(app, host='127.0.0.1', port=P, "
        "lifespan='on', workers=1, log_level='warning')` (mcpgen's own "
        "`server.run(transport='http')` settings; loop and HTTP parser 'auto', i.e. "
        f"uvloop {env.versions['uvloop']} and httptools {env.versions['httptools']}). "
        "Modern requests carry `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method: "
        "tools/call`, `Mcp-Name: echo`; legacy ones a session opened by `initialize` "
        "(`Mcp-Session-Id`, `MCP-Protocol-Version: 2025-11-25`); the Lua script numbers "
        "the requests' ids so that no two in flight share one. The official servers "
        "answer JSON (`json_response=True`), like mcpgen and the ceiling. wrk: "
        f"`wrk -t1 -cN -d{settings.http_seconds}s --timeout 10s -s bench/wrk/mcp.lua`, "
        f"{settings.http_passes} run(s) per server, workload and repeat (the servers "
        "taking turns run by run; a repeat's figure is requests over time summed over its "
        "runs, p50 the median and p99 the highest of its runs), after a warm-up of "
        f"{settings.http_warmup_calls} keep-alive requests per era from Python.",
        "- stdio: the suite is the client (blocking pipe I/O, one thread), after "
        f"{settings.stdio_warmup_calls} warm-up calls per server. Each workload gives "
        f"each server {settings.stdio_seconds:g} s per repeat, in {settings.stdio_slices} "
        f"slices of {settings.stdio_seconds / settings.stdio_slices:g} s; the servers "
        "take turns slice by slice (order reversed every slice). Latency percentiles are "
        "over every request of the repeat. A pipelined burst is N requests (N sized from "
        "a probe burst to last about one slice, at least 150: "
        + ", ".join(f"{k} {n:,}" for k, n in sorted(burst.items()))
        + ") written by a second thread while the main thread reads the N replies; one "
        "burst per slice.",
        "- `tools/list` reply sizes: "
        + ", ".join(f"{k} {n:,} B" for k, n in sorted(sizes.items()))
        + ".",
        f"- {settings.repeats} repeats; each starts fresh processes (8 stdio: 4 servers x "
        "2 eras; 4 HTTP), checks every reply (echoed text; 100 tools; identical "
        "definitions for low-level and ceiling; a 64-request burst with every id "
        "answered once), then runs each workload on each server in turn (low-level, "
        "mcpgen, ceiling, MCPServer: mcpgen next to both references; reversed every "
        "turn). Cold start: "
        f"{settings.cold_repeats} repeats after one untimed start per server.",
        "- Ratio targets count as met when both the ratio of the medians and the median "
        "of the per-repeat (paired) ratios reach them. The official reference for the "
        "targets is the low-level `Server` (the faster of the two official servers).",
        "- Not measured: granian (the issue's optional second HTTP server); every HTTP "
        "row is uvicorn.",
        "- Not pinned to cores: the OS schedules the client (or wrk) and the server on the "
        f"{env.cores} cores as it would in use. Absolute numbers drift with the machine's "
        "load; ratios taken in the same repeat do not.",
    ]


def format_section(results: Results, settings: Settings, env: Environment) -> str:
    out = [
        SECTION_START,
        "## End to end: server processes over stdio and HTTP, mcpgen vs the official SDK "
        "vs the raw ceiling",
        "",
        "Generated by `bench/suite.py`; do not edit by hand, re-run the command below.",
        "",
        f"- Date: {env.date} (UTC)",
        f"- Command: `{env.command}` ({settings.mode} run, {settings.repeats} repeats)",
        f"- Machine: `{env.machine}`, {env.cpu}, {env.cores} cores, Linux {env.kernel}",
        f"- Python {env.python}; {env.versions_line()}",
        f"- Load generator: {env.wrk}; {env.valgrind}",
        f"- Run time: {results.notes.get('seconds', 0)} s",
        "",
        *body(results, settings, env),
        "",
        *methods_notes(settings, env, results),
        SECTION_END,
    ]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------- main


def preflight(args: argparse.Namespace) -> None:
    missing = []
    if not args.no_http and shutil.which("wrk") is None:
        missing.append(
            "wrk (the HTTP load generator) is not installed: install it with "
            "`apt-get install -y wrk` (Debian's package), or pass --no-http"
        )
    if not args.no_callgrind and (
        shutil.which("valgrind") is None or shutil.which("callgrind_control") is None
    ):
        missing.append(
            "valgrind (callgrind) is not installed: install it with "
            "`apt-get install -y valgrind`, or pass --no-callgrind"
        )
    if missing:
        raise SystemExit("bench/suite.py: " + "\n".join(missing))
    if sys.platform != "linux":
        raise SystemExit("bench/suite.py reads /proc: it runs on Linux only")
    # An editable install runs from the source tree: byte-compile it now, or with
    # PYTHONDONTWRITEBYTECODE set every server start would recompile edited modules.
    roots = [str(REPO_ROOT / d) for d in ("runtime", "generated", "examples", "bench")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *roots], check=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _common.arg_parser(
        "End-to-end benchmarks: mcpgen vs the official SDK vs the raw ceiling.",
        quick="short run (< 3 min)",
    )
    parser.add_argument("--repeats", type=int, help="override the number of repeats")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP workloads")
    parser.add_argument("--no-callgrind", action="store_true", help="skip callgrind")
    _common.add_doc_options(parser, "suite", doc_help="the file --write-doc edits")
    parser.add_argument("--json", type=Path, help="also save the raw samples as JSON here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else argv
    args = parse_args(args_list)
    preflight(args)
    settings = QUICK if args.quick else FULL
    if args.repeats:
        settings = dataclasses.replace(settings, repeats=args.repeats)
    env = Environment.current(args_list)
    results = Results()
    expected: dict[str, list[Any]] = {}
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcpgen-suite-") as tmp:
        logdir = Path(tmp)
        stdio_phase(settings, results, logdir, expected)
        if not args.no_http:
            http_phase(settings, results, logdir)
        startup_phase(settings, results, logdir, expected)
        if not args.no_callgrind:
            callgrind_phase(settings, results, logdir)
    results.notes["seconds"] = round(time.monotonic() - began)
    progress(f"done in {results.notes['seconds']} s")
    print("\n".join(body(results, settings, env)))
    if args.json:
        args.json.write_text(json.dumps(results.as_json(), indent=1))
    if args.write_doc:
        section = format_section(results, settings, env)
        _common.write_section(args.doc, "suite", section, _common.doc_header(env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
