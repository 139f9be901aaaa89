"""list_changed fan-out across workers: how long a `notifications/tools/list_changed`
takes from the tools/call that causes it to every open `subscriptions/listen` stream.

    .venv/bin/python bench/fanout.py [--streams 1000] [--rounds 20] [--via direct,nginx]
                                     [--legacy] [--legacy-via direct,nginx] [--monitor]
                                     [--repeat 3] [--json bench/results/fanout.json]

It starts `examples/cluster/run.sh` (a temporary redis-server, two workers of
`examples/everything.py`, nginx round robin in front), opens `--streams` modern
(2026-07-28) listen streams, spread evenly over the workers (`direct`: half to each
worker's own port; `nginx`: all through the balancer, which alternates), waits for
every stream's acknowledgement, then `--rounds` times: takes the time, sends a
`tools/call` of `test_trigger_tool_change` to one worker (alternating), and takes the
time each stream's notification arrives. The delay of a stream is arrival minus send.
Every wait is bounded (`--timeout`); a notification that does not arrive is counted
as missing, never waited for without end. `--repeat` runs every pass again (the kinds
alternating); the table and the JSON's `passes` pool the repeats, `runs` has each.

The client is one asyncio process with one plain `asyncio.Protocol` per stream (HTTP/1.1
by hand, chunked decoding, a substring count on the SSE data), so that a stream costs
the client a callback per notification and nothing else: on a machine whose cores the
client shares with the workers, Redis and nginx, its own cost is part of the figure.

`--legacy` adds legacy passes: legacy (2025-11-25) sessions with a GET stream each,
for the old transport's fan-out, through nginx (`--legacy-via nginx`, the default) or
to the workers' own ports (`direct`: each session initialized on one worker and its GET
opened on the other, so that it is live on both, as round robin leaves it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import queue
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RUN_SH = REPO / "examples" / "cluster" / "run.sh"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACK = b'"notifications/subscriptions/acknowledged"'
CHANGED = b'"notifications/tools/list_changed"'
TRIGGER_TOOL = "test_trigger_tool_change"


@dataclass(frozen=True)
class Target:
    """Where a connection goes: a loopback port, and the Host header to send."""

    host: str
    port: int

    @property
    def header(self) -> str:
        return f"{self.host}:{self.port}"


def _request(target: Target, body: bytes, headers: dict[str, str], method: str = "POST") -> bytes:
    lines = [f"{method} /mcp HTTP/1.1", f"Host: {target.header}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def listen_request(target: Target, rid: int) -> bytes:
    params = {"notifications": {"toolsListChanged": True}, "_meta": META}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": params}
    ).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "subscriptions/listen",
    }
    return _request(target, body, headers)


def call_request(target: Target, rid: int, tool: str, *, connection: str = "close") -> bytes:
    params = {"name": tool, "arguments": {}, "_meta": META}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    ).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
        "Connection": connection,
    }
    return _request(target, body, headers)


class Stream(asyncio.Protocol):
    """One streamed HTTP response read by hand: the status, then the chunked body,
    counting the notifications in it. `arrivals` holds the monotonic time (perf_counter)
    of each list_changed, in order; `acked` is set by the listen acknowledgement (or,
    with `ready_on_headers`, by a 200 response's headers: a legacy GET stream)."""

    def __init__(self, request: bytes, ready_on_headers: bool = False) -> None:
        self.request = request
        self.ready_on_headers = ready_on_headers
        self.acked = asyncio.Event()
        self.closed = asyncio.Event()
        self.arrivals: list[float] = []
        self.status = 0
        self.headers: dict[str, str] = {}
        self.error = ""
        self.transport: asyncio.Transport | None = None
        self._head = b""
        self._raw = b""  # chunked body not decoded yet
        self._need = -1  # bytes left in the current chunk; -1: a size line comes next
        self._data = b""  # decoded body not yet searched (a marker may straddle reads)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        if not self.status:
            self._head += data
            end = self._head.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data = self._head[:end], self._head[end + 4 :]
            first, *rest = head.decode("latin-1").split("\r\n")
            self.status = int(first.split()[1])
            self.headers = {
                k.strip().lower(): v.strip() for k, _, v in (r.partition(":") for r in rest)
            }
            if self.status != 200:
                self.error = f"status {self.status}"
            elif self.ready_on_headers:
                self.acked.set()
        if not self.closed.is_set():  # (after the last chunk: only its trailer)
            self._raw += data
            self._decode()

    def _decode(self) -> None:
        raw, out = self._raw, []
        while True:
            if self._need < 0:  # a chunk-size line
                end = raw.find(b"\r\n")
                if end < 0:
                    break
                size = int(raw[:end].split(b";")[0], 16)
                raw = raw[end + 2 :]
                if size == 0:  # the last chunk: the response ended
                    self.closed.set()
                    raw = b""
                    break
                self._need = size
            elif self._need == 0:  # the CRLF after a chunk's data
                if len(raw) < 2:
                    break
                raw, self._need = raw[2:], -1
            else:
                if not raw:
                    break
                take = raw[: self._need]
                out.append(take)
                self._need -= len(take)
                raw = raw[len(take) :]
        self._raw = raw
        if out:
            self._scan(b"".join(out))

    def _scan(self, chunk: bytes) -> None:
        now = time.perf_counter()
        data = self._data + chunk
        if not self.acked.is_set() and ACK in data:
            self.acked.set()
        found = data.count(CHANGED)
        self.arrivals.extend([now] * found)
        # Keep what may hold the start of a marker cut by this read; drop what is counted.
        last = data.rfind(CHANGED)
        rest = data[last + len(CHANGED) :] if last >= 0 else data
        self._data = rest[-(max(len(ACK), len(CHANGED)) - 1) :]

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self.error:
            self.error = str(exc)
        self.closed.set()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def _exchange(target: Target, request: bytes, timeout: float) -> bytes:
    """Send one request on a fresh connection and read the whole (Connection: close)
    response."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(target.host, target.port), timeout
    )
    try:
        writer.write(request)
        return await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def _open(
    targets: Sequence[Target], requests: Sequence[bytes], ready_on_headers: bool, timeout: float
) -> list[Stream]:
    """One `Stream` per request, to targets in turn, opened in batches (a listen backlog
    overflows with a thousand connects at once), each batch waited for until ready."""
    loop = asyncio.get_running_loop()
    streams: list[Stream] = []
    batch = 100
    for start in range(0, len(requests), batch):
        opened = []
        for i in range(start, min(start + batch, len(requests))):
            target = targets[i % len(targets)]
            stream = Stream(requests[i], ready_on_headers)
            await asyncio.wait_for(
                loop.create_connection(lambda s=stream: s, target.host, target.port), timeout
            )
            opened.append(stream)
        streams.extend(opened)
        waits = [asyncio.ensure_future(s.acked.wait()) for s in opened]
        _, pending = await asyncio.wait(waits, timeout=timeout)
        for w in pending:
            w.cancel()
        if pending:
            bad = [s.error or f"status {s.status}" for s in opened if not s.acked.is_set()]
            for s in streams:
                s.close()
            raise SystemExit(f"{len(pending)} streams not acknowledged in {timeout}s: {bad[:5]}")
    return streams


class Monitor:
    """Counts what the cluster's Redis runs (MONITOR) while a round is measured: the
    commands clients send (heartbeats left out), and, of the commands Lua scripts run,
    the deliveries to a session's log (the dedup lookup each starts with) and the
    appends. MONITOR slows Redis down: the `--monitor` runs give counts, not times."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(b"MONITOR\r\n")
        self.counts = {"commands": 0, "deliveries": 0, "appends": 0}
        self.on = False
        self.port = port
        self.stats = self._commandstats()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            *lines, buffer = (buffer + chunk).split(b"\r\n")
            if not self.on:
                continue
            for line in lines:
                if b" lua] " in line:
                    if re.search(rb'"ZSCORE" "[^"]*e-keys:', line):
                        self.counts["deliveries"] += 1
                    elif b'"RPUSH"' in line:
                        self.counts["appends"] += 1
                elif b'"' in line and not (b'"PUBLISH"' in line and b'"h ' in line):
                    self.counts["commands"] += 1

    def _commandstats(self) -> tuple[int, int]:
        """Redis's own tally, over every command so far: (EVALSHA calls, microseconds
        spent executing commands)."""
        with socket.create_connection(("127.0.0.1", self.port)) as sock:
            sock.sendall(b"INFO commandstats\r\n")
            raw = b""
            while b"\r\n" not in raw:
                raw += sock.recv(1 << 16)
            size = int(raw[1 : raw.index(b"\r\n")])
            while len(raw) < raw.index(b"\r\n") + 2 + size:
                raw += sock.recv(1 << 16)
        scripts = used = 0
        for name, calls, usec in re.findall(rb"cmdstat_(\w+):calls=(\d+),usec=(\d+)", raw):
            used += int(usec)
            if name == b"evalsha":
                scripts = int(calls)
        return scripts, used

    def take(self) -> dict[str, int]:
        counts, self.counts = self.counts, dict.fromkeys(self.counts, 0)
        before, self.stats = self.stats, self._commandstats()
        counts["scripts"] = self.stats[0] - before[0]
        counts["redis_us"] = self.stats[1] - before[1]
        return counts

    def close(self) -> None:
        self.sock.close()


@dataclass
class Pass:
    """The figures of one pass: every delay in milliseconds, and what was missing."""

    name: str
    streams: int
    rounds: int
    delays_ms: list[float] = field(default_factory=list)
    missing: int = 0
    round_min_ms: list[float] = field(default_factory=list)  # the first stream served
    round_max_ms: list[float] = field(default_factory=list)  # the last one
    redis: list[dict[str, int]] = field(default_factory=list)  # per round, with --monitor

    @property
    def expected(self) -> int:
        return self.streams * self.rounds

    def summary(self) -> dict[str, Any]:
        d = sorted(self.delays_ms)
        return {
            "pass": self.name,
            "streams": self.streams,
            "rounds": self.rounds,
            "expected": self.expected,
            "delivered": len(d),
            "missing": self.missing,
            "p50_ms": _pct(d, 50),
            "p95_ms": _pct(d, 95),
            "p99_ms": _pct(d, 99),
            "max_ms": d[-1] if d else None,
            "mean_ms": statistics.fmean(d) if d else None,
            "first_p50_ms": _pct(sorted(self.round_min_ms), 50),
            "round_min_ms": self.round_min_ms,
            "round_max_ms": self.round_max_ms,
            **({"redis_per_change": self.redis} if self.redis else {}),
        }


def _pct(ordered: list[float], p: float) -> float | None:
    if not ordered:
        return None
    rank = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]  # nearest rank


async def measure(
    name: str,
    listen_targets: Sequence[Target],
    trigger_targets: Sequence[Target],
    *,
    streams: int,
    rounds: int,
    tool: str = TRIGGER_TOOL,
    timeout: float = 10.0,
    gap: float = 0.2,
    legacy: bool = False,
    monitor: Monitor | None = None,
) -> Pass:
    """Open `streams` listen streams over `listen_targets`, trigger `rounds` changes
    (alternating over `trigger_targets`) and time each notification's arrival."""
    if legacy:
        gate = asyncio.Semaphore(32)  # a thousand handshakes at once would time out

        async def session(target: Target) -> str:
            async with gate:
                return await _legacy_session(target, timeout)

        async def end(target: Target, session_id: str) -> None:
            async with gate:
                headers = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
                headers["Connection"] = "close"
                request = _request(target, b"", headers, method="DELETE")
                with contextlib.suppress(OSError, TimeoutError):
                    await _exchange(target, request, timeout)

        sessions = await asyncio.gather(
            *(session(listen_targets[i % len(listen_targets)]) for i in range(streams))
        )
        # The GET goes to the next worker: the session is live on two (direct pass).
        get_targets = [*listen_targets[1:], *listen_targets[:1]]
        requests = [_legacy_get(get_targets[i % len(get_targets)], sid)
                    for i, sid in enumerate(sessions)]  # fmt: skip
    else:
        get_targets = list(listen_targets)
        requests = [listen_request(listen_targets[i % len(listen_targets)], i + 1)
                    for i in range(streams)]  # fmt: skip
    opened = await _open(get_targets, requests, legacy, timeout)
    result = Pass(name, streams, rounds)
    try:
        await asyncio.sleep(0.2)  # the legacy GET streams are registered server-side too
        for r in range(rounds):
            target = trigger_targets[r % len(trigger_targets)]
            if monitor is not None:
                await asyncio.sleep(0.3)  # (the heartbeats and write-backs of before)
                monitor.take()
                monitor.on = True
            sent = time.perf_counter()
            reply = await _exchange(target, call_request(target, 1000 + r, tool), timeout)
            if b" 200 " not in reply.split(b"\r\n", 1)[0]:
                raise SystemExit(f"trigger failed: {reply[:300]!r}")
            deadline = sent + timeout
            while time.perf_counter() < deadline:
                if all(len(s.arrivals) > r for s in opened):
                    break
                await asyncio.sleep(0.005)
            if monitor is not None:
                await asyncio.sleep(0.3)  # MONITOR's lines lag behind
                monitor.on = False
                result.redis.append(monitor.take())
            delays = [(s.arrivals[r] - sent) * 1000 for s in opened if len(s.arrivals) > r]
            result.missing += streams - len(delays)
            result.delays_ms.extend(delays)
            result.round_min_ms.append(min(delays) if delays else float("nan"))
            result.round_max_ms.append(max(delays) if delays else float("nan"))
            await asyncio.sleep(gap)
        extra = sum(max(0, len(s.arrivals) - rounds) for s in opened)
        if extra:
            raise SystemExit(f"{name}: {extra} notifications arrived more than once")
    finally:
        for s in opened:
            s.close()
        await asyncio.sleep(0.2)  # let the workers see the disconnects
        if legacy:  # idle sessions would stay live on the workers for the next passes
            await asyncio.gather(*(end(listen_targets[i % len(listen_targets)], sid)
                                   for i, sid in enumerate(sessions)))  # fmt: skip
    return result


async def _legacy_session(target: Target, timeout: float) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "fanout", "version": "1"},
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Connection": "close",
    }
    reply = await _exchange(target, _request(target, json.dumps(init).encode(), headers), timeout)
    found = re.search(rb"(?im)^mcp-session-id:\s*(\S+)", reply)
    if found is None:
        raise SystemExit(f"initialize gave no session: {reply[:300]!r}")
    sid = found.group(1).decode()
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    headers |= {"Mcp-Session-Id": sid, "MCP-Protocol-Version": LEGACY}
    await _exchange(target, _request(target, note, headers), timeout)
    return sid


def _legacy_get(target: Target, session_id: str) -> bytes:
    headers = {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": LEGACY,
    }
    return _request(target, b"", headers, method="GET")


# ------------------------------------------------------------------------------- cluster


@dataclass
class Cluster:
    proc: subprocess.Popen[str]
    nginx: Target
    workers: list[Target]
    dir: Path

    @property
    def redis_port(self) -> int:
        found = re.search(r"port=(\d+)", (self.dir / "redis.log").read_text())
        if found is None:
            raise SystemExit("no port in redis.log")
        return int(found.group(1))


@contextlib.contextmanager
def cluster(workers: int = 2, timeout: float = 120.0) -> Iterator[Cluster]:
    """`examples/cluster/run.sh` on a free port until the block ends."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = ["bash", str(RUN_SH), "--port", str(port), "--workers", str(workers)]
    cmd += ["--python", sys.executable]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        where = _ready(proc, timeout)
        conf = (where / "nginx.conf").read_text()
        ports = [int(p) for p in re.findall(r"server 127\.0\.0\.1:(\d+)", conf)]
        yield Cluster(
            proc, Target("127.0.0.1", port), [Target("127.0.0.1", p) for p in ports], where
        )
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _ready(proc: subprocess.Popen[str], timeout: float) -> Path:
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    out = proc.stdout
    threading.Thread(target=lambda: [lines.put(ln) for ln in out], daemon=True).start()
    deadline = time.monotonic() + timeout
    where = None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            word, _, rest = lines.get(timeout=0.5).strip().partition(" ")
        except queue.Empty:
            continue
        if word == "logs":
            where = Path(rest)
        elif word == "ready" and where is not None:
            return where
    raise SystemExit("run.sh did not get ready")


# ---------------------------------------------------------------------------------- main


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} ms"


def table(passes: Sequence[dict[str, Any]]) -> str:
    rows = [
        "| pass | streams | notifications delivered | p50 | p95 | p99 | max |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for p in passes:
        rows.append(
            f"| {p['pass']} | {p['streams']:,} | {p['delivered']:,} of {p['expected']:,} | "
            f"{_fmt(p['p50_ms'])} | {_fmt(p['p95_ms'])} | {_fmt(p['p99_ms'])} | "
            f"{_fmt(p['max_ms'])} |"
        )
    return "\n".join(rows)


async def run(args: argparse.Namespace, running: Cluster) -> list[Pass]:
    """Every pass `--repeat` times, the kinds alternating (so load that comes and goes
    on a shared machine falls on each alike)."""
    kinds: list[tuple[str, list[Target], bool]] = []
    for via in filter(None, args.via.split(",")):
        if via not in ("direct", "nginx"):
            raise SystemExit(f"--via: direct or nginx, not {via!r}")
        kinds.append(
            (f"listen, {via}", running.workers if via == "direct" else [running.nginx], False)
        )
    legacy_via = args.legacy_via.split(",") if args.legacy_via else ["nginx"]
    if args.legacy:
        for via in filter(None, legacy_via):
            targets = running.workers if via == "direct" else [running.nginx]
            kinds.append((f"legacy GET, {via}", targets, True))
    passes = []
    monitor = Monitor(running.redis_port) if args.monitor else None
    for _ in range(args.repeat):
        for name, targets, legacy in kinds:
            passes.append(
                await measure(name, targets, targets, streams=args.streams, rounds=args.rounds,
                              timeout=args.timeout, legacy=legacy, monitor=monitor)
            )  # fmt: skip
            print(table([passes[-1].summary()]).splitlines()[-1], file=sys.stderr)
            for counts in passes[-1].redis:
                print(f"  redis per change: {counts}", file=sys.stderr)
    return passes


def pooled(passes: Sequence[Pass]) -> list[Pass]:
    """One pass per kind with every delay of its repeats."""
    merged: dict[str, Pass] = {}
    for p in passes:
        into = merged.setdefault(p.name, Pass(p.name, p.streams, 0))
        into.rounds += p.rounds
        into.delays_ms += p.delays_ms
        into.missing += p.missing
        into.round_min_ms += p.round_min_ms
        into.round_max_ms += p.round_max_ms
    return list(merged.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--via", default="direct,nginx", help="direct, nginx or both")
    parser.add_argument("--legacy", action="store_true", help="also legacy GET streams")
    parser.add_argument(
        "--legacy-via", default="nginx", help="where the legacy passes go: direct, nginx or both"
    )
    parser.add_argument(
        "--monitor", action="store_true", help="count Redis commands per change (slows it)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of every pass")
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args(argv)
    soft, _ = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)
    if soft < args.streams * 2 + 100:
        raise SystemExit(f"ulimit -n is {soft}: raise it above {args.streams * 2 + 100}")
    started = time.time()
    with cluster(args.workers) as running:
        passes = asyncio.run(run(args, running))
    summaries = [p.summary() for p in pooled(passes)]
    print(table(summaries))
    if args.json is not None:
        report = {
            "benchmark": "fanout",
            "target": "p99 delivery <= 100 ms",
            "date": time.strftime("%Y-%m-%d", time.gmtime(started)),
            "machine": {
                "cpus": os.cpu_count(),
                "loadavg": os.getloadavg(),
                "python": platform.python_version(),
            },
            "workers": args.workers,
            "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
            "passes": summaries,  # the repeats of each pass pooled
            "runs": [p.summary() for p in passes],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0 if all(p.missing == 0 for p in passes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
