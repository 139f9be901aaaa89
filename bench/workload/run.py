"""The real-workload benchmark: I/O-bound tools (Redis + an HTTP API of 100,000
products) on every server under test, driven by wrk, both flows, in one run.

    bench/workload/run.sh [options]      # makes the venvs, then runs this file

Pieces: a real ``redis-server`` on a free loopback port, seeded (``seed.py``); the API
stand-in (``api.py``); the servers (``servers/``): mcpgen on the ``httpx`` stack (httpx
+ redis.asyncio, what a user writes first) and on the ``fast`` stack (aiohttp + hiredis
+ pipelining + msgspec), the official SDK 2.3 ``MCPServer`` (stateless, JSON
responses) and FastMCP 4.2.3 (when ``WORKLOAD_FASTMCP_PYTHON`` names its venv's
python), each one uvicorn worker; the TypeScript SDK 1.32 with Express (when
``WORKLOAD_NODE`` and ``WORKLOAD_NODE_PATH`` name Node >= 22 and its packages; the legacy
flow only: that SDK does not speak 2026-07-28); the driver: wrk with ``flow.lua``, one thread per
connection, so each connection is one virtual user walking its own flow.

Method: interleaved rounds (each round runs every flow on every server, in an order
reversed every round); one wrk run per (round, flow, server) of ``--duration`` seconds
at ``--connections`` connections; every answer checked. Per run: tool calls/s, server
CPU seconds per 1,000 calls (``/proc/<pid>/stat`` utime+stime before and after), the
CPU shares of the server, the API stand-in, Redis and wrk (what bounds the run), RSS
(``VmRSS`` after the run), wrk's p50/p99 per HTTP request. Reported: medians over the
rounds; ratios against the official SDK. Then a cProfile of each mcpgen stack per flow:
the server's CPU per call split into mcpgen / ASGI server / HTTP client / Redis client /
JSON / event loop / tool code / other.

Results go to ``--json`` and into the "A real workload" section of ``--doc``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import _profile  # noqa: E402
import _report  # noqa: E402
import seed  # noqa: E402

HOST = "127.0.0.1"
FLOWS = ("legacy", "modern")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Spec:
    name: str
    label: str
    python: str
    script: str
    stack: str
    flows: tuple[str, ...] = FLOWS
    env: dict[str, str] = field(default_factory=dict)


def specs() -> dict[str, Spec]:
    me = sys.executable
    found = {
        "official": Spec("official", "official 2.3 MCPServer", me, "official_server.py", "httpx"),
        "mcpgen-httpx": Spec(
            "mcpgen-httpx", "mcpgen, httpx + redis.asyncio", me, "mcpgen_server.py", "httpx"
        ),
        "mcpgen-fast": Spec(
            "mcpgen-fast", "mcpgen, aiohttp + hiredis + msgspec", me, "mcpgen_server.py", "fast"
        ),
    }
    official = os.environ.get("WORKLOAD_OFFICIAL_PYTHON", me)
    found["official"].python = official
    fastmcp = os.environ.get("WORKLOAD_FASTMCP_PYTHON")
    if fastmcp:
        found["fastmcp"] = Spec("fastmcp", "FastMCP 4.2.3", fastmcp, "fastmcp_server.py", "httpx")
    node, modules = os.environ.get("WORKLOAD_NODE"), os.environ.get("WORKLOAD_NODE_PATH")
    if node and modules:  # the TS SDK 1.32 speaks no 2026-07-28: the legacy flow only
        label = "TS SDK 1.32 + Express"
        env = {"NODE_PATH": modules}
        found["ts"] = Spec("ts", label, node, "ts_server.mjs", "node", ("legacy",), env)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with status {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1):
            return
        time.sleep(0.1)
    raise SystemExit(f"{what} not listening after {seconds:.0f} s")


def initialize_frame(client: str, version: str = "2025-11-25") -> dict[str, Any]:
    """A legacy `initialize` request from `client`."""
    info = {"name": client, "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def wait_answers(port: int, what: str, seconds: float = 120) -> None:
    """Until the server answers an `initialize` (a supervisor's socket listens before
    its workers have started)."""
    import http.client  # noqa: PLC0415

    body = json.dumps(initialize_frame("ready"))
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection(HOST, port, timeout=5)
            try:
                conn.request("POST", "/mcp", body, headers)
                if conn.getresponse().status == 200:
                    return
            finally:
                conn.close()
        time.sleep(0.2)
    raise SystemExit(f"{what} does not answer initialize after {seconds:.0f} s")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def family(pid: int) -> list[int]:
    """`pid` and its descendants (a server's supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        out.append(todo.pop())
        todo += children.get(out[-1], [])
    return out


def tree_cpu(pid: int) -> dict[int, float]:
    """CPU seconds of each live process of a server's family."""
    out = {}
    for each in family(pid):
        with contextlib.suppress(OSError):
            out[each] = cpu_seconds(each)
    return out


def worker_rss_mb(pid: int) -> float:
    """RSS of the largest worker: the process itself when it has no children, else its
    largest descendant (a supervisor's own RSS is not a worker's)."""
    workers = family(pid)[1:] or [pid]
    return max(rss_mb(each) for each in workers)


@dataclass
class Stack:
    """The shared pieces: Redis, the API stand-in, and the servers started so far."""

    redis_url: str = ""
    api: str = ""
    pids: dict[str, int] = field(default_factory=dict)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(
        self,
        name: str,
        argv: list[str],
        port: int,
        env: dict[str, str] | None = None,
        wait: float = 60,
    ) -> int:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
        self.procs.append(proc)
        wait_port(port, proc, name, wait)
        self.pids[name] = proc.pid
        return proc.pid

    def stop(self, name: str) -> None:
        pid = self.pids.pop(name)
        proc = next(p for p in self.procs if p.pid == pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self.procs.remove(proc)

    def close(self) -> None:
        for name in list(self.pids):
            self.stop(name)


@contextlib.contextmanager
def backends(products: int) -> Iterator[Stack]:
    stack = Stack()
    try:
        redis_port, api_port = free_port(), free_port()
        server = shutil.which("redis-server") or "redis-server"
        argv = [server, "--bind", HOST, "--port", str(redis_port), "--loglevel", "warning"]
        stack.start("redis", [*argv, "--save", "", "--appendonly", "no"], redis_port)
        stack.redis_url = f"redis://{HOST}:{redis_port}/0"
        seed.seed(stack.redis_url, products)
        argv = [sys.executable, str(HERE / "api.py"), "--port", str(api_port)]
        stack.start("api", [*argv, "--products", str(products)], api_port)
        stack.api = f"http://{HOST}:{api_port}"
        yield stack
    finally:
        stack.close()


def start_server(
    stack: Stack,
    spec: Spec,
    env: dict[str, str] | None = None,
    *,
    workers: int = 1,
    wrap: list[str] | None = None,
    wait: float = 60,
) -> int:
    """Start one server (`workers` processes on one port), under `wrap` (a valgrind
    command line) when given; its port once it listens."""
    port = free_port()
    argv = [*(wrap or []), spec.python, str(HERE / "servers" / spec.script), "--port", str(port)]
    argv += ["--api", stack.api, "--redis", stack.redis_url, "--stack", spec.stack]
    argv += ["--workers", str(workers)]
    stack.start(spec.name, argv, port, {**spec.env, **(env or {})}, wait)
    wait_answers(port, spec.label, wait)
    return port


def wrk(
    port: int, flow: str, connections: int, seconds: float, products: int
) -> tuple[dict[str, Any], float]:
    """One wrk run: its result line and wrk's own CPU seconds."""
    # A 10 s timeout: on a loaded machine a slow answer is slow, not a failure (wrk's
    # default of 2 s counts it as a socket error and drops the answer).
    argv = ["wrk", "-t", str(connections), "-c", str(connections), "-d", f"{seconds:g}s"]
    argv += ["--timeout", "10s"]
    argv += ["--latency", "-s", str(HERE / "flow.lua"), f"http://{HOST}:{port}/mcp"]
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            argv,
            stdout=out,
            env={**os.environ, "WORKLOAD_FLOW": flow, "WORKLOAD_PRODUCTS": str(products)},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    match = re.search(r"^workload-wrk-result (\{.*\})$", text, re.MULTILINE)
    if proc.returncode != 0 or match is None:
        raise SystemExit(f"wrk failed ({proc.returncode}):\n{text}")
    return json.loads(match.group(1)), usage.ru_utime + usage.ru_stime


def measure(
    stack: Stack, name: str, port: int, flow: str, args: argparse.Namespace
) -> dict[str, Any]:
    server = stack.pids[name]
    watched = {"api": stack.pids["api"], "redis": stack.pids["redis"]}
    before = {k: cpu_seconds(pid) for k, pid in watched.items()}
    before_server = tree_cpu(server)
    started = time.monotonic()
    result, wrk_cpu = wrk(port, flow, args.connections, args.duration, args.products)
    wall = time.monotonic() - started
    used = {k: cpu_seconds(pid) - before[k] for k, pid in watched.items()}
    after_server = tree_cpu(server)  # a worker that died meanwhile: its CPU is not counted
    used["server"] = sum(cpu - before_server.get(pid, 0.0) for pid, cpu in after_server.items())
    calls = max(result["calls"], 1)
    return {
        **result,
        "calls_per_s": result["calls"] / (result["duration_us"] / 1e6),
        "cpu_s_per_1000": used["server"] / calls * 1000,
        "cpu_share": {**{k: v / wall for k, v in used.items()}, "wrk": wrk_cpu / wall},
        "rss_mb": worker_rss_mb(server),
    }


Runs = dict[str, dict[str, list[dict[str, Any]]]]


def rounds(stack: Stack, chosen: list[Spec], workers: int, args: argparse.Namespace) -> Runs:
    """Every flow on every server (`workers` processes each), interleaved rounds."""
    runs: Runs = {s.name: {f: [] for f in args.flows if f in s.flows} for s in chosen}
    ports = {s.name: start_server(stack, s, workers=workers) for s in chosen}
    try:
        for spec in chosen:  # warm-up, and a first check of every answer
            for flow in runs[spec.name]:
                for _ in range(5):  # a first call may wait for lazy imports: allow a few
                    warm = wrk(ports[spec.name], flow, min(2, args.connections), 3, args.products)
                    if warm[0]["calls"] or warm[0]["errors"]:
                        break
                if warm[0]["errors"] or not warm[0]["calls"]:
                    why = warm[0]["first_error"] or "no calls"
                    raise SystemExit(f"{spec.label} ({flow}): {why}")
        order = list(chosen)
        for number in range(args.rounds):
            for flow in args.flows:
                for spec in (s for s in order if flow in runs[s.name]):
                    row = measure(stack, spec.name, ports[spec.name], flow, args)
                    runs[spec.name][flow].append(row)
                    print(
                        f"{workers} worker(s) round {number + 1} {flow:6} {spec.label:38} "
                        f"{row['calls_per_s']:8.0f} calls/s {row['cpu_s_per_1000']:6.3f} CPU "
                        f"s/1000 RSS {row['rss_mb']:5.1f} MB errors {row['errors']}",
                        file=sys.stderr,
                    )
            order.reverse()
    finally:
        for spec in chosen:
            if spec.name in stack.pids:
                stack.stop(spec.name)
    return runs


def loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def run(args: argparse.Namespace) -> dict[str, Any]:
    chosen = [specs()[n] for n in args.servers]
    load = loadavg()
    began = time.monotonic()
    with backends(args.products) as stack:
        runs = {str(w): rounds(stack, chosen, w, args) for w in args.workers}
        load_after = loadavg()
        profiles = {} if args.no_profile else _profile.profiles(stack, chosen, args)
        counted = {}
        if args.instructions:
            import _instructions  # noqa: PLC0415

            for spec in chosen:
                if spec.name in args.instructions:
                    units = ["lifecycle", *args.flows]
                    counted[spec.name] = _instructions.count(stack, spec, units, 30, 90)
    return {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "minutes": round((time.monotonic() - began) / 60, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_before": load,
            "loadavg_after": load_after,
            "python": platform.python_version(),
        },
        "settings": {
            k: getattr(args, k)
            for k in ("connections", "duration", "rounds", "products", "flows", "workers")
        },
        "servers": {s.name: s.label for s in chosen},
        "runs": runs,
        "summary": {w: summarize(r) for w, r in runs.items()},
        "profiles": profiles,
        "instructions": counted,
    }


def summarize(runs: Runs) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, flows in runs.items():
        for flow, rows in flows.items():
            if not rows:
                continue
            med = {k: statistics.median(r[k] for r in rows) for k in
                   ("calls_per_s", "cpu_s_per_1000", "p50_us", "p99_us")}  # fmt: skip
            shares = {
                k: statistics.median(r["cpu_share"][k] for r in rows) for k in rows[0]["cpu_share"]
            }
            out.setdefault(name, {})[flow] = {
                **med,
                "rss_mb": max(r["rss_mb"] for r in rows),
                "errors": sum(r["errors"] for r in rows),  # answers that failed the check
                "socket_errors": sum(r["socket_errors"] for r in rows),  # timeouts and the like
                "calls": sum(r["calls"] for r in rows),
                "cpu_share": shares,
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--servers", nargs="+", default=None, help=f"of: {', '.join(specs())}")
    parser.add_argument("--flows", nargs="+", choices=FLOWS, default=list(FLOWS))
    parser.add_argument(
        "--workers", nargs="+", type=int, default=[1, 2], help="worker processes per server"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 8 connections, 2 s runs, 1 round"
    )
    parser.add_argument(
        "--instructions",
        nargs="*",
        default=None,
        help="also count instructions per request under callgrind (slow) for these servers "
        "(default mcpgen-fast official)",
    )
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--no-fastmcp", action="store_true")
    parser.add_argument("--no-ts", action="store_true")
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/workload.json")
    parser.add_argument("--doc", type=Path, default=REPO / "docs/performance.md")
    args = parser.parse_args()
    if args.quick:
        args.connections, args.duration, args.rounds = 8, 2.0, 1
    if args.instructions == []:
        args.instructions = ["mcpgen-fast", "official"]
    known = specs()
    if args.no_fastmcp:
        known.pop("fastmcp", None)
    if args.no_ts:
        known.pop("ts", None)
    args.servers = args.servers or list(known)
    unknown = [n for n in args.servers if n not in known]
    if unknown:
        parser.error(f"unknown or unavailable servers {unknown}: of {', '.join(known)}")
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    results = run(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1) + "\n")
    _report.write(args.doc, results)
    print(f"results: {args.json}; section 'A real workload' of {args.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
