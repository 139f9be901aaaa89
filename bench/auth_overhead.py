"""What bearer verification costs on the HTTP benchmark: the benchmark server
(`examples/bench_server.py`) served twice by uvicorn, without auth and with
`auth=AuthSettings(JWTVerifier(...))` (an ES256 JWT, the same token on every request,
as a real client sends it), loaded by wrk at 16 connections with the suite's
`tools/call` of `echo` (2026-07-28). Rounds alternate between the two servers, so drift
of a shared machine hits both; the figure is the ratio of the medians.

    python bench/auth_overhead.py [--seconds 5] [--rounds 3] [--connections 16]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ISSUER, RESOURCE = "https://issuer.example", "https://bench.example/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def serve(port: int, public_jwk: str | None) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from bench_server import server  # noqa: PLC0415

    from mcpgen.auth import AuthSettings, JWTVerifier  # noqa: PLC0415
    from mcpgen.transports import uvicorn_server  # noqa: PLC0415

    auth = None
    if public_jwk is not None:
        verifier = JWTVerifier(issuer=ISSUER, public_key=json.loads(public_jwk))
        auth = AuthSettings(verifier, resource=RESOURCE)
    uvicorn_server(server.asgi_app(auth=auth), "127.0.0.1", port, log_level="warning").run()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not start")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk(port: int, headers: dict[str, str], seconds: int, connections: int) -> tuple[float, int]:
    params = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    env = {
        **os.environ,
        "MCP_BODY": json.dumps(body, separators=(",", ":")),
        "MCP_HEADERS": "\n".join(f"{k}: {v}" for k, v in headers.items()),
    }
    argv = [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds}s",
        "-s",
        str(ROOT / "bench/wrk/mcp.lua"),
    ]
    out = subprocess.run(
        [*argv, f"http://127.0.0.1:{port}/mcp"], env=env, capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(re.search(r"mcp-wrk-result (\{.*\})", out).group(1))  # type: ignore[union-attr]
    if result["status"]:
        raise SystemExit(f"non-2xx answers: {result}")
    return float(result["requests"]) / (result["duration_us"] / 1e6), int(result["requests"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--serve", type=int)
    parser.add_argument("--jwk")
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.jwk)
        return
    from joserfc import jwt  # noqa: PLC0415
    from joserfc.jwk import ECKey  # noqa: PLC0415

    key = ECKey.generate_key("P-256", parameters={"kid": "bench"})
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "bench", "exp": int(time.time()) + 3600}
    token = jwt.encode({"alg": "ES256", "kid": "bench"}, claims, key)
    base = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "echo",
    }
    ports = {"plain": free_port(), "auth": free_port()}
    jwk = json.dumps(key.as_dict(private=False))
    procs = [
        subprocess.Popen([sys.executable, __file__, "--serve", str(ports["plain"])]),
        subprocess.Popen([sys.executable, __file__, "--serve", str(ports["auth"]), "--jwk", jwk]),
    ]
    try:
        for port in ports.values():
            wait_ready(port)
        headers = {"plain": base, "auth": {**base, "Authorization": f"Bearer {token}"}}
        pids = {"plain": procs[0].pid, "auth": procs[1].pid}
        runs: dict[str, list[float]] = {"plain": [], "auth": []}
        cpu: dict[str, list[float]] = {"plain": [], "auth": []}  # server CPU µs per request
        for kind in ("plain", "auth"):  # warm-up
            wrk(ports[kind], headers[kind], 1, args.connections)
        for _ in range(args.rounds):
            for kind in ("plain", "auth"):
                before = cpu_seconds(pids[kind])
                rate, count = wrk(ports[kind], headers[kind], args.seconds, args.connections)
                runs[kind].append(rate)
                cpu[kind].append(1e6 * (cpu_seconds(pids[kind]) - before) / count)
        for kind, label in (("plain", "without auth"), ("auth", "with auth   ")):
            print(
                f"{label}: {statistics.median(runs[kind]):,.0f} req/s "
                f"{[round(r) for r in runs[kind]]}, server CPU "
                f"{statistics.median(cpu[kind]):.1f} µs/request {[round(c, 1) for c in cpu[kind]]}"
            )
        plain, auth = statistics.median(runs["plain"]), statistics.median(runs["auth"])
        cost = statistics.median(cpu["auth"]) / statistics.median(cpu["plain"]) - 1
        print(f"throughput with auth: {100 * auth / plain:.1f}% of without")
        print(f"server CPU per request with auth: {100 * cost:+.1f}%")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    main()
