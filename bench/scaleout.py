"""Scale-out: 1 -> 2 -> 4 workers of `mcpgen serve --workers N` on one Redis, the modern
and the legacy flow of the workload benchmark, in one command.

    .venv/bin/python bench/scaleout.py            # 16 connections, 10 s runs, 3 rounds
    .venv/bin/python bench/scaleout.py --quick    # 8 connections, 4 s runs, 1 round

Pieces: a redis-server on a free loopback port (persistence off) holding only mcpgen's
shared state; `mcpgen serve bench/scaleout_server.py:server --workers N --redis URL` (one
port, the kernel hands each connection to a worker); wrk with `bench/workload/flow.lua`
(`WORKLOAD_ECHO=echo`: the workload's two flows on a tool without I/O). The legacy flow
is a whole session per call (initialize, initialized, the call, DELETE), the modern flow
one 2026-07-28 request per call; every answer is checked.

Per run: tool calls/s, calls/s per worker, the workers' CPU per call (`/proc`), Redis's
CPU per call, and Redis commands per HTTP request and per call (`INFO commandstats`
before and after, every command counted, Lua scripts as one `evalsha`). Reported: the
median over the rounds, and the load average when the run began. The rows go to
`--json` and between the `scaleout:start` / `scaleout:end` markers of `--doc`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE / "workload"))
import run as workload  # noqa: E402  (bench/workload/run.py: wrk, ports, /proc)

FLOWS = ("modern", "legacy")
START = "<!-- scaleout:start (bench/scaleout.py writes this section) -->"
END = "<!-- scaleout:end -->"
HEADING = "## Scale-out: 1, 2 and 4 workers, both flows"


def redis_info(port: int) -> dict[str, int]:
    """`INFO commandstats`: calls per command."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"INFO commandstats\r\n")
        data = b""
        while True:
            data += sock.recv(65536)
            head, _, rest = data.partition(b"\r\n")
            if head.startswith(b"$") and len(rest) >= int(head[1:]) + 2:
                break
    counts: dict[str, int] = {}
    for line in rest.decode().splitlines():
        if line.startswith("cmdstat_"):
            name, _, fields = line[len("cmdstat_") :].partition(":")
            counts[name] = int(fields.split(",")[0].split("=")[1])
    return counts


def descendants(root: int) -> list[int]:
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    stat = (entry / "stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry.name))
                        todo.append(int(entry.name))
    return found


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = workload.free_port()
    where = tempfile.mkdtemp(prefix="mcpgen-scaleout-")
    argv = [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1"]
    argv += ["--port", str(port), "--save", "", "--appendonly", "no", "--dir", where]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        workload.wait_port(port, proc, "redis-server")
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(where, ignore_errors=True)


@contextlib.contextmanager
def workers(count: int, redis_port: int) -> Iterator[tuple[int, list[int]]]:
    """`mcpgen serve --workers count`; yields its port and the workers' pids."""
    port = workload.free_port()
    argv = [sys.executable, "-m", "mcpgen", "serve", "bench/scaleout_server.py:server"]
    argv += ["--transport", "http", "--port", str(port), "--workers", str(count)]
    env = {
        **os.environ,
        "MCPGEN_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "MCPGEN_STATE_KEYS": "scale-out-benchmark-state-key-0123",
    }
    proc = subprocess.Popen(argv, cwd=REPO, env=env, stdin=subprocess.DEVNULL)
    try:
        workload.wait_port(port, proc, "mcpgen serve")
        deadline = time.monotonic() + 60
        # --workers 1 serves in the process itself; more are its children
        while len(pids := descendants(proc.pid) if count > 1 else [proc.pid]) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {len(pids)} of {count} workers started")
            time.sleep(0.1)
        yield port, pids
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def measure(count: int, flow: str, args: argparse.Namespace, redis: Any) -> dict[str, Any]:
    redis_port, redis_proc = redis
    with socket.create_connection(("127.0.0.1", redis_port), timeout=5) as sock:
        sock.sendall(b"FLUSHALL\r\n")  # every run starts empty: no sessions of earlier runs
        assert sock.recv(64).startswith(b"+OK")
    with workers(count, redis_port) as (port, pids):
        for _ in range(5):  # warm-up: every worker imported, connected and answering
            warm, _ = workload.wrk(port, flow, min(count * 2, args.connections), 3, 0)
            if warm["errors"]:
                raise SystemExit(f"{flow}, {count} workers: {warm['first_error']}")
            if warm["calls"] >= 10 * count:
                break
        else:
            raise SystemExit(f"{flow}, {count} workers: too few calls in the warm-up")
        load = float(Path("/proc/loadavg").read_text().split()[0])
        cpu = sum(workload.cpu_seconds(pid) for pid in pids)
        redis_cpu = workload.cpu_seconds(redis_proc.pid)
        before = redis_info(redis_port)
        result, _ = workload.wrk(port, flow, args.connections, args.duration, 0)
        after = redis_info(redis_port)
        cpu = sum(workload.cpu_seconds(pid) for pid in pids) - cpu
        redis_cpu = workload.cpu_seconds(redis_proc.pid) - redis_cpu
    calls, requests = max(result["calls"], 1), max(result["requests"], 1)
    commands = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    commands["info"] = commands.get("info", 0) - 1  # the second INFO itself
    total = sum(commands.values())
    per_s = result["calls"] / (result["duration_us"] / 1e6)
    return {
        "workers": count,
        "flow": flow,
        "calls": result["calls"],
        "requests": result["requests"],
        "errors": result["errors"] + result["socket_errors"],
        "calls_per_s": per_s,
        "per_worker": per_s / count,
        "cpu_ms_per_call": cpu / calls * 1000,
        "redis_cpu_us_per_call": redis_cpu / calls * 1e6,
        "redis_per_request": total / requests,
        "redis_per_call": total / calls,
        "scripts_per_request": (commands.get("evalsha", 0) + commands.get("eval", 0)) / requests,
        "commands": {k: v for k, v in sorted(commands.items()) if v},
        "load": load,
        "p99_us": result["p99_us"],
    }


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for flow in FLOWS:
        for count in sorted({r["workers"] for r in runs}):
            mine = [r for r in runs if r["flow"] == flow and r["workers"] == count]
            if not mine:
                continue
            row = {k: statistics.median(r[k] for r in mine) for k in mine[0] if k != "commands"}
            row.update(flow=flow, workers=count, errors=sum(r["errors"] for r in mine))
            row["loads"] = [r["load"] for r in mine]
            row["commands"] = mine[len(mine) // 2]["commands"]
            rows.append(row)
    return rows


def section(results: dict[str, Any]) -> str:
    rows = results["rows"]
    loads = [load for row in rows for load in row["loads"]]
    lines = [
        START,
        HEADING,
        "",
        f"Measured with `bench/scaleout.py{' --quick' if results['quick'] else ''}` on "
        f"{results['date']}, {results['cpus']} cores, load average {min(loads):.1f} to "
        f"{max(loads):.1f} when the runs began (other work shared the machine). "
        f"`mcpgen serve bench/scaleout_server.py:server --workers N` on one redis-server "
        f"(the kernel hands each connection to a worker), driven by wrk with "
        f"`bench/workload/flow.lua` at {results['connections']} connections, "
        f"{results['duration']:g} s per run, median of {results['rounds']} "
        f"round{'s' if results['rounds'] > 1 else ''}. The tool is an `echo` with no I/O "
        "(`WORKLOAD_ECHO=echo`), so every CPU second and every Redis command is mcpgen's. "
        "Legacy: a whole session per call (initialize, initialized, the call, DELETE: four "
        "HTTP requests); modern: one 2026-07-28 request per call. Redis commands are "
        "`INFO commandstats` deltas: a Lua script counts as its `EVALSHA` plus every "
        "command it runs, so the scripts column is the closer count of round trips.",
        "",
        "| flow | workers | tool calls/s | per worker | worker CPU per call | "
        "Redis commands per request | scripts per request | Redis commands per call | "
        "Redis CPU per call | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['flow']} | {row['workers']} | {row['calls_per_s']:,.0f} | "
            f"{row['per_worker']:,.0f} | {row['cpu_ms_per_call']:.2f} ms | "
            f"{row['redis_per_request']:.2f} | {row['scripts_per_request']:.2f} | "
            f"{row['redis_per_call']:.2f} | "
            f"{row['redis_cpu_us_per_call']:.0f} us | {row['errors']} |"
        )
    for row in rows:
        if row["workers"] == max(r["workers"] for r in rows):
            top = ", ".join(f"{k} {v:,}" for k, v in row["commands"].items()) or "none"
            where = f"one {row['flow']} run at {row['workers']} workers"
            lines += ["", f"Redis commands of {where}, {row['requests']:,.0f} requests: {top}."]
    lines += ["", note(results["cpus"], max(r["workers"] for r in rows)), END, ""]
    return "\n".join(lines)


def note(cpus: int, most: int) -> str:
    """What the figures can and cannot say on this machine."""
    text = ""
    if most > cpus:
        text = (
            f"This machine has {cpus} cores, shared with wrk and redis-server in the same "
            f"run (and with other work): past {cpus} workers there is no core left to "
            f"scale onto, so the rows above {cpus} workers measure contention, not "
            "capacity, and the CPU per call rises with it (more processes taking turns "
            "on the same cores). The round trips per request hold on any machine; for "
            "the throughput curve rerun on a quiet machine with more cores "
            "(`.venv/bin/python bench/scaleout.py`). "
        )
    return text + (
        "A modern call has nothing to keep in Redis (no session, no task here), so it "
        "costs no Redis command. A legacy call pays for the session's creation, its "
        "`notifications/initialized` and its DELETE; the call itself is answered from "
        "the worker's copy of the session. Most of its Redis commands run inside "
        "scripts, and most of those are `ZSCORE`s: the script that creates a session "
        "looks at every open session of the same client (the quota of 100; all of "
        "wrk's connections are one client here, 127.0.0.1), and the write-back of uses "
        "checks each session it names. Those grow with the connections and the "
        "workers; the scripts per request, the round trips, do not (three per legacy "
        "call). Behind a per-request balancer (nginx round robin) a session's requests "
        "land on several workers, and each first request of a session on a worker adds "
        "one load (docs/guide/scale-out.md)."
    )


def write(doc: Path, text: str) -> None:
    old = doc.read_text() if doc.exists() else ""
    if START in old and END in old:
        head, rest = old.split(START, 1)
        new = head + text.rstrip("\n") + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    doc.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 connections, 4 s, 1 round")
    parser.add_argument("--workers", default="1,2,4", help="worker counts (1,2,4)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=REPO / "bench/results/scaleout.json")
    parser.add_argument("--doc", type=Path, default=REPO / "docs/performance.md")
    args = parser.parse_args()
    if args.quick:
        args.connections, args.duration, args.rounds = 8, 4.0, 1
    if shutil.which("wrk") is None or shutil.which("redis-server") is None:
        raise SystemExit("needs wrk and redis-server (apt-get install wrk redis-server)")
    os.environ["WORKLOAD_ECHO"] = "echo"
    counts = [int(n) for n in args.workers.split(",")]
    runs = []
    with redis_server() as redis:
        for number in range(args.rounds):
            order = counts if number % 2 == 0 else counts[::-1]
            for flow in FLOWS:
                for count in order:
                    runs.append(measure(count, flow, args, redis))
                    row = runs[-1]
                    print(
                        f"{flow} {count}: {row['calls_per_s']:.0f} calls/s, "
                        f"{row['redis_per_request']:.2f} Redis commands/request, "
                        f"load {row['load']:.1f}",
                        file=sys.stderr,
                    )
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "quick": args.quick,
        "connections": args.connections,
        "duration": args.duration,
        "rounds": args.rounds,
        "runs": runs,
        "rows": summarize(runs),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    write(args.doc, section(results))
    print(f"results: {args.json}; section {HEADING!r} of {args.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
