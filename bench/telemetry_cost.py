"""Instructions per tools/call with telemetry off and on (callgrind), the way
bench/suite.py counts them: the server runs under valgrind with instrumentation off,
a warm-up, then two dumped segments of N1 and N2 calls: per call = (I2 - I1) / (N2 - N1).

    .venv/bin/python bench/telemetry_cost.py [--tree DIR] [--mode MODE] [--http] [--n1 --n2]
    bench/run.sh bench/telemetry_cost.py --server official [--mode MODE] [--http]

The server and the modes are those of `bench/_telemetry.py`:
`--server mcpgen` (default), `official` (the official SDK's low-level `Server`, its
OpenTelemetry middleware as shipped) or `official-mcpserver` (its `MCPServer`); the
official ones need the benchmark venv (`bench/run.sh`).
`--mode off`: mcpgen without telemetry; the official server without its middleware.
`--mode api`: telemetry on with no SDK configured (the API's no-op providers).
`--mode traces`: an SDK tracer provider whose exporter drops every span; no meter
provider. `--mode sdk`: that and a meter provider with an in-memory reader (the cost
of recording, not of exporting). `--mode sampled`: as `sdk`, with
ParentBased(TraceIdRatioBased(0.01)) as the sampler; `traces-sampled`: `traces` with it.
`--mode bare-sdk` / `bare-span` / `bare-record`: no MCP server at all, only what the SDK
costs per span and histogram record / per span / per record.
`--tree DIR`: serve mcpgen from another checkout's runtime (e.g. /work/main, for "before").
`--http`: over Streamable HTTP (uvicorn, one keep-alive connection), not stdio.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _telemetry

HERE = Path(__file__).resolve().parent
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
TOTALS = re.compile(rb"^totals:\s+(\d+)", re.MULTILINE)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _http_calls(port: int, body: bytes) -> Callable[[int], None]:
    """POSTs of `body` on one keep-alive connection, once the server listens."""
    deadline = time.monotonic() + 300
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }

    def calls(n: int) -> None:
        for _ in range(n):
            conn.request("POST", "/mcp", body.strip(), headers)
            reply = conn.getresponse().read()
            assert b'"hello"' in reply, reply

    return calls


def control(*args: str) -> None:
    done = subprocess.run(["callgrind_control", *args], capture_output=True, text=True, check=False)
    if "OK" not in done.stdout:
        raise SystemExit(f"callgrind_control {args}: {done.stdout}{done.stderr}")


def measure(
    server: str,
    tree: Path | None,
    mode: str,
    n1: int,
    n2: int,
    warmup: int,
    http: bool,
    script: Path = HERE / "_telemetry.py",
) -> tuple[float, float]:
    """Instructions per call of `script SERVER MODE [PORT]`, and a whole-run check."""
    work = Path(tempfile.mkdtemp(prefix="otel-cost-"))
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("MCPGEN_OTEL", None)
    if tree is not None:
        env["PYTHONPATH"] = f"{tree / 'runtime'}:{tree / 'generated'}"
    out = work / "callgrind.%p"
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    port = _free_port() if http else 0
    proc = subprocess.Popen(
        [*argv, sys.executable, str(script), server, mode, *([str(port)] if http else [])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    request["params"] = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
    line = json.dumps(request, separators=(",", ":")).encode() + b"\n"

    def calls(n: int) -> None:
        for _ in range(n):
            proc.stdin.write(line)  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            reply = proc.stdout.readline()  # type: ignore[union-attr]
            assert b'"hello"' in reply, reply

    if http:
        calls = _http_calls(port, line)

    calls(warmup)
    control("--instr=on", str(proc.pid))
    calls(n1)
    control("--dump", str(proc.pid))
    calls(n2)
    control("--dump", str(proc.pid))
    proc.stdin.close()
    if http:
        proc.terminate()
    proc.wait(300)
    totals = []
    for part in (1, 2):
        found = TOTALS.search(Path(str(out).replace("%p", str(proc.pid)) + f".{part}").read_bytes())
        assert found is not None
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / (n2 - n1), totals[1] / n2


BARE = """
import sys
sys.path.insert(0, sys.argv[2])
from _telemetry import configure
from opentelemetry import metrics, trace

configure("sdk")
tracer = trace.get_tracer("bare")
histogram = metrics.get_meter("bare").create_histogram("d", unit="s")
kind = trace.SpanKind.SERVER
span_too, record_too = sys.argv[3] != "record", sys.argv[3] != "span"
for _ in range(int(sys.argv[1])):
    attrs = {"mcp.method.name": "tools/call", "jsonrpc.request.id": "1",
             "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
             "mcp.protocol.version": "2026-07-28"}
    if span_too:
        tracer.start_span("tools/call echo", None, kind, attrs).end()
    if record_too:
        del attrs["jsonrpc.request.id"]
        histogram.record(0.001, attrs)
"""


def bare(part: str, n1: int, n2: int) -> float:
    """What the OpenTelemetry SDK alone costs per span and histogram record (``part``
    "both"), per span ("span") or per record ("record"), no MCP server: whole-process
    counts of two runs, (I2 - I1) / (N2 - N1)."""
    work = Path(tempfile.mkdtemp(prefix="otel-cost-"))
    script = work / "bare.py"
    script.write_text(BARE)
    totals = []
    for n in (n1, n2):
        out = work / f"callgrind.{n}"
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        subprocess.run(
            [*argv, sys.executable, str(script), str(n), str(HERE), part],
            check=True,
            capture_output=True,
        )
        found = TOTALS.search(out.read_bytes())
        assert found is not None
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / (n2 - n1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--server", choices=_telemetry.SERVERS, default="mcpgen")
    bare_modes = {"bare-sdk": "both", "bare-span": "span", "bare-record": "record"}
    parser.add_argument("--mode", choices=[*_telemetry.MODES, *bare_modes], default="off")
    parser.add_argument("--http", action="store_true", help="Streamable HTTP, not stdio")
    parser.add_argument("--n1", type=int, default=500)
    parser.add_argument("--n2", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=300)
    args = parser.parse_args()
    started = time.monotonic()
    if args.mode in bare_modes:
        part = bare_modes[args.mode]
        what = {"both": "span + histogram record", "span": "span", "record": "histogram record"}
        print(f"the SDK alone: {bare(part, args.n1, args.n2):,.0f} Ir per {what[part]}")
        return
    if args.server != "mcpgen" and importlib.util.find_spec("mcp") is None:
        raise SystemExit("the official SDK is not installed here: use bench/run.sh")
    per_call, check = measure(
        args.server, args.tree, args.mode, args.n1, args.n2, args.warmup, args.http
    )
    where = args.tree or "this checkout"
    print(
        f"{args.server} ({where}) {'http' if args.http else 'stdio'} telemetry {args.mode}: "
        f"{per_call:,.0f} Ir per call "
        f"(check {check:,.0f}; {time.monotonic() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
