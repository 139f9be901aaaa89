"""Instructions per request of a workload server under callgrind: a figure that does not
move with the machine's load, unlike CPU seconds.

Each server runs under ``valgrind --tool=callgrind --instr-atstart=no``; once it
listens it is warmed up, then instrumentation is switched on and two segments of N1
and N2 units of work are sent on one keep-alive connection, each segment dumped
(``callgrind_control``): instructions per unit = (I2 - I1) / (N2 - N1), so start-up,
warm-up and the constant costs cancel out. The units:

- ``lifecycle``: a legacy session without a call: ``initialize``,
  ``notifications/initialized``, ``DELETE`` (no DELETE when the server gives no session);
- ``legacy``: the k6 flow of one tool call: the lifecycle with a ``tools/call`` inside;
- ``modern``: one 2026-07-28 ``tools/call``.

The tool calls rotate over the three tools with fixed arguments. Whole server process:
interpreter, ASGI server, mcpgen (or the peer SDK), the I/O clients.

    .venv-workload/bin/python bench/workload/_instructions.py [--servers ...] [--n1 40 --n2 120]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

LEGACY, MODERN = "2025-11-25", "2026-07-28"
UNITS = ("lifecycle", "legacy", "modern")
_TOTALS = re.compile(rb"^(?:summary|totals): (\d+)", re.MULTILINE)
CALLS = (
    ("search_products", {"category": "books", "min_price": 100, "max_price": 250, "limit": 10}),
    ("get_user_cart", {"user_id": 7}),
    ("checkout", {"user_id": 7, "items": [{"product_id": 42, "quantity": 2}]}),
)


class Driver:
    """One keep-alive connection walking the units of work, every answer checked."""

    def __init__(self, port: int) -> None:
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.turn = 0

    def send(self, method: str, body: Any, headers: dict[str, str]) -> tuple[int, str, bytes]:
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        data = None if body is None else json.dumps(body).encode()
        self.http.request(method, "/mcp", body=data, headers={**base, **headers})
        response = self.http.getresponse()
        return response.status, response.getheader("mcp-session-id") or "", response.read()

    def call_body(self, meta: bool) -> dict[str, Any]:
        name, arguments = CALLS[self.turn % len(CALLS)]
        self.turn += 1
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        return {"jsonrpc": "2.0", "id": self.turn, "method": "tools/call", "params": params}

    def check_call(self, status: int, answer: bytes) -> None:
        if status != 200 or b'"isError":true' in answer or b'"result"' not in answer:
            raise SystemExit(f"tools/call answered {status}: {answer[:200]!r}")

    def unit(self, kind: str) -> None:
        if kind == "modern":
            body = self.call_body(True)
            headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
            status, _, answer = self.send(
                "POST", body, {**headers, "Mcp-Name": body["params"]["name"]}
            )
            return self.check_call(status, answer)
        import run as runner  # noqa: PLC0415

        init = runner.initialize_frame("instructions", LEGACY)
        status, session, answer = self.send("POST", init, {})
        if status != 200 or b"protocolVersion" not in answer:
            raise SystemExit(f"initialize answered {status}: {answer[:200]!r}")
        headers = {"MCP-Protocol-Version": LEGACY}
        if session:
            headers["Mcp-Session-Id"] = session
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        status, _, answer = self.send("POST", note, headers)
        if status not in (200, 202, 204):
            raise SystemExit(f"notifications/initialized answered {status}: {answer[:200]!r}")
        if kind == "legacy":
            self.check_call(*self.send("POST", self.call_body(False), headers)[::2])
        if session:
            status, _, answer = self.send("DELETE", None, headers)
            if status not in (200, 202, 204):
                raise SystemExit(f"DELETE answered {status}: {answer[:200]!r}")
        return None


def _control(*args: str) -> None:
    subprocess.run(["callgrind_control", *args], check=True, capture_output=True)


def count(stack: Any, spec: Any, units: list[str], n1: int, n2: int) -> dict[str, float]:
    """Instructions per unit of work of one server (see the module docstring)."""
    import run as runner  # noqa: PLC0415

    out: dict[str, float] = {}
    for kind in units:
        if kind not in ("lifecycle", *spec.flows):
            continue
        folder = Path(tempfile.mkdtemp(prefix="workload-cg-"))
        dump = folder / "cg.out"
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        prefix = [*valgrind, f"--callgrind-out-file={dump}"]
        port = runner.start_server(stack, spec, wrap=prefix, wait=900)
        pid = stack.pids[spec.name]
        try:
            driver = Driver(port)
            for _ in range(10):
                driver.unit(kind)
            _control("--instr=on", str(pid))
            for n in (n1, n2):
                for _ in range(n):
                    driver.unit(kind)
                _control("--dump", str(pid))
        finally:
            stack.stop(spec.name)
        totals = []
        for part in (1, 2):
            found = _TOTALS.search(Path(f"{dump}.{part}").read_bytes())
            if found is None:
                raise SystemExit(f"no totals in the callgrind dump {dump}.{part}")
            totals.append(int(found.group(1)))
        out[kind] = (totals[1] - totals[0]) / (n2 - n1)
        print(f"instructions {spec.name:14} {kind:9} {out[kind]:14,.0f}", file=sys.stderr)
    return out


def main() -> None:
    import run as runner  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", nargs="+", default=["mcpgen-fast", "official"])
    parser.add_argument("--units", nargs="+", choices=UNITS, default=list(UNITS))
    parser.add_argument("--n1", type=int, default=40)
    parser.add_argument("--n2", type=int, default=120)
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    known = runner.specs()
    results: dict[str, Any] = {}
    with runner.backends(args.products) as stack:
        for name in args.servers:
            results[name] = count(stack, known[name], args.units, args.n1, args.n2)
    text = json.dumps(results, indent=1)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
