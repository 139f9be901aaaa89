"""CPU a tools/call costs through `mcpgen proxy` (stdio -> stdio), against the same call
made directly to the upstream (examples/everything.py over stdio, `greet`, modern era).

    .venv/bin/python bench/proxy_overhead.py [--calls 3000]

For the timed calls only (read from /proc before and after), it prints per call: the
client's CPU, the direct server's, and through the proxy the proxy process's and its
upstream's. Overhead = the proxy process's CPU per call; the issue's target is at most
2x a direct call's CPU (client + server). Linux only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
from pathlib import Path

from mcpgen import Client

REPO = Path(__file__).resolve().parents[1]
UPSTREAM = [sys.executable, str(REPO / "examples" / "everything.py"), "--transport", "stdio"]
MCPGEN = str(Path(sys.executable).with_name("mcpgen"))
TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _own() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def measure(command: list[str], calls: int) -> dict[str, float]:
    async with Client.stdio(command, era="modern") as client:
        for _ in range(200):  # warm up
            await client.call_tool("greet", {"name": "x"})
        pid = client.link.proc.pid  # type: ignore[attr-defined]
        pids = [pid, *_children(pid)]
        before = [_cpu(p) for p in pids]
        own = _own()
        for _ in range(calls):
            await client.call_tool("greet", {"name": "x"})
        own = _own() - own
        after = [_cpu(p) for p in pids]
    figures = {"client": own / calls}
    for name, b, a in zip(("server", "upstream"), before, after, strict=False):
        figures[name] = (a - b) / calls
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    direct = asyncio.run(measure(UPSTREAM, args.calls))
    proxied = asyncio.run(
        measure([MCPGEN, "proxy", "--upstream-era", "modern", "--", *UPSTREAM], args.calls)
    )
    us = 1e6
    base = direct["client"] + direct["server"]
    print(f"direct:  client {direct['client'] * us:.0f} us, server {direct['server'] * us:.0f} us")
    print(
        f"proxied: client {proxied['client'] * us:.0f} us, proxy {proxied['server'] * us:.0f} us,"
        f" upstream {proxied.get('upstream', 0.0) * us:.0f} us"
    )
    ratio = proxied["server"] / base
    print(f"proxy overhead per call / direct call CPU: {ratio:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
