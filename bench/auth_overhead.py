"""What bearer verification costs on the HTTP benchmark: the benchmark server
(`examples/bench_server.py`) served twice by uvicorn, without auth and with
`auth=AuthSettings(JWTVerifier(...))` (an ES256 JWT, the same token on every request,
as a real client sends it), loaded by wrk at 16 connections with the suite's
`tools/call` of `echo` (2026-07-28). Rounds alternate between the two servers, so drift
of a shared machine hits both; the figure is the ratio of the medians.

    python bench/auth_overhead.py [--seconds 5] [--rounds 3] [--connections 16]
    python bench/auth_overhead.py --instructions   # callgrind, one server at a time
    python bench/auth_overhead.py --dpop [--rounds 5] [--requests 300]

DPoP is reported on its own: every request carries a fresh proof (no tool like wrk
replays one, the server would refuse it), so the proofs are made before each round
and sent by one httpx client; `--dpop` compares server CPU per request of a bearer
token and of a DPoP-bound token with its proof on the same protected server, and
`--instructions` adds a `dpop` run (the proof's signature check, thumbprint, claims and
the in-memory jti cache on every request; the token itself from the cache).

Throughput on a shared machine drifts; `--instructions` is the steady figure: each
server runs under `valgrind --tool=callgrind --instr-atstart=no`, is warmed up, then
serves N1 and N2 keep-alive requests from one httpx client, each segment dumped
(`callgrind_control`); instructions per request = (I2 - I1) / (N2 - N1), uvicorn and
httptools included.
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
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ISSUER, RESOURCE = "https://issuer.example", "https://bench.example/mcp"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def serve(port: int, public_jwk: str | None, dpop: bool = False) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from bench_server import server  # noqa: PLC0415

    from mcpgen.auth import AuthSettings, DPoP, JWTVerifier  # noqa: PLC0415
    from mcpgen.transports import uvicorn_server  # noqa: PLC0415

    auth = None
    if public_jwk is not None:
        verifier = JWTVerifier(issuer=ISSUER, public_key=json.loads(public_jwk))
        auth = AuthSettings(verifier, resource=RESOURCE, dpop=DPoP() if dpop else None)
    uvicorn_server(server.asgi_app(auth=auth), "127.0.0.1", port, log_level="warning").run()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
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


_TOTALS = re.compile(rb"^(?:summary|totals): (\d+)", re.MULTILINE)


Headers = dict[str, str]


def dpop_headers(base: Headers, bound: tuple[str, Any], n: int) -> list[Headers]:
    """`n` requests' headers with the DPoP-bound token and a fresh proof each."""
    token, key = bound
    proof = key.proof
    return [
        {**base, "Authorization": f"DPoP {token}", "DPoP": proof("POST", RESOURCE, token)}
        for _ in range(n)
    ]


def instructions(
    jwk: str, token: str, base: Headers, n1: int, n2: int, bound: tuple[str, Any]
) -> dict[str, float]:
    """Server instructions per request, without and with auth (see the docstring)."""
    import httpx  # noqa: PLC0415

    out: dict[str, float] = {}
    runs: tuple[tuple[str, list[str], bool], ...] = (
        ("plain", [], False),
        ("header", [], True),
        ("auth", ["--jwk", jwk], True),
        ("dpop", ["--jwk", jwk, "--dpop"], True),
    )
    for kind, extra, bearer in runs:
        port = free_port()
        dump = Path(tempfile.mkdtemp()) / "cg.%p"
        argv = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={dump}",
        ]
        proc = subprocess.Popen([*argv, sys.executable, __file__, "--serve", str(port), *extra])
        headers = {**base, "Authorization": f"Bearer {token}"} if bearer else base
        params = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        try:
            wait_ready(port, 600)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120) as http:

                def calls(
                    n: int, body: object = body, kind: str = kind, headers: Headers = headers
                ) -> None:
                    each = dpop_headers(base, bound, n) if kind == "dpop" else [headers] * n
                    for sent in each:  # proofs are made before the requests they go with
                        assert http.post("/mcp", json=body, headers=sent).status_code == 200

                calls(50)
                control = ["callgrind_control"]
                subprocess.run(
                    [*control, "--instr=on", str(proc.pid)], check=True, capture_output=True
                )
                calls(n1)
                subprocess.run([*control, "--dump", str(proc.pid)], check=True, capture_output=True)
                calls(n2)
                subprocess.run([*control, "--dump", str(proc.pid)], check=True, capture_output=True)
        finally:
            proc.terminate()
            proc.wait(300)
        totals = []
        for part in (1, 2):
            found = _TOTALS.search(
                Path(f"{str(dump).replace('%p', str(proc.pid))}.{part}").read_bytes()
            )
            assert found is not None, "no totals in the callgrind dump"
            totals.append(int(found.group(1)))
        out[kind] = (totals[1] - totals[0]) / (n2 - n1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--serve", type=int)
    parser.add_argument("--jwk")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--dpop", action="store_true")
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.jwk, args.dpop)
        return
    from joserfc import jwt  # noqa: PLC0415
    from joserfc.jwk import ECKey  # noqa: PLC0415

    from mcpgen.auth._oauth_dpop import DPoPKey  # noqa: PLC0415

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
    jwk = json.dumps(key.as_dict(private=False))
    client_key = DPoPKey()
    cnf = {"jkt": ECKey.import_key(client_key.public).thumbprint()}
    bound = (jwt.encode({"alg": "ES256", "kid": "bench"}, {**claims, "cnf": cnf}, key), client_key)
    if args.dpop:
        dpop_cpu(jwk, token, base, bound, args.rounds, args.requests)
        return
    if args.instructions:
        per = instructions(jwk, token, base, 100, 400, bound)
        print(
            f"without auth:                  {per['plain'] / 1000:.1f} k instructions per request"
        )
        print(f"without auth, header sent:     {per['header'] / 1000:.1f} k")
        print(f"with auth:                     {per['auth'] / 1000:.1f} k")
        print(
            f"auth adds {100 * (per['auth'] / per['plain'] - 1):+.1f}% to a request without "
            f"the header, verification {100 * (per['auth'] / per['header'] - 1):+.1f}% to one "
            "with it"
        )
        print(f"with DPoP (a proof per request): {per['dpop'] / 1000:.1f} k")
        print(
            f"DPoP adds {100 * (per['dpop'] / per['auth'] - 1):+.1f}% to a bearer-protected "
            f"request, {100 * (per['dpop'] / per['plain'] - 1):+.1f}% to a plain one"
        )
        return
    ports = {"plain": free_port(), "auth": free_port()}
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


def dpop_cpu(
    jwk: str, token: str, base: Headers, bound: tuple[str, Any], rounds: int, n: int
) -> None:
    """Server CPU per request on one protected server (DPoP configured): a bearer
    token vs a DPoP-bound token with a fresh proof, alternating rounds of `n`."""
    import httpx  # noqa: PLC0415

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--jwk", jwk, "--dpop"]
    )
    params = {"name": "echo", "arguments": {"text": "hello"}, "_meta": META}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    cpu: dict[str, list[float]] = {"bearer": [], "dpop": []}
    try:
        wait_ready(port)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for round_ in range(rounds + 1):  # the first round warms up
                for kind in ("bearer", "dpop"):
                    if kind == "dpop":
                        each = dpop_headers(base, bound, n)
                    else:
                        each = [{**base, "Authorization": f"Bearer {token}"}] * n
                    before = cpu_seconds(proc.pid)
                    for sent in each:
                        assert http.post("/mcp", json=body, headers=sent).status_code == 200
                    if round_:
                        cpu[kind].append(1e6 * (cpu_seconds(proc.pid) - before) / n)
    finally:
        proc.terminate()
        proc.wait(10)
    for kind in ("bearer", "dpop"):
        rounded = [round(c) for c in cpu[kind]]
        print(f"{kind:6}: server CPU {statistics.median(cpu[kind]):.0f} µs/request {rounded}")
    extra = statistics.median(cpu["dpop"]) - statistics.median(cpu["bearer"])
    print(f"a DPoP proof costs the server {extra:+.0f} µs per request")


if __name__ == "__main__":
    main()
