"""One supervised worker started by hand: `mcpgen serve SPEC --fd K --ready-fd W`, as
`Supervisor` starts it, on a listening socket this process made and then let go of (so
that, once the worker closes its copy, nothing accepts on the port any more)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SPEC = '''
import asyncio
import os

from mcpgen import Server

server = Server("drain")


async def _opened(path: str) -> None:
    while not os.path.exists(path):
        await asyncio.sleep(0.05)


@server.tool
async def gate(path: str) -> str:
    """Answers once the file `path` exists."""
    await _opened(path)
    return f"passed {os.path.basename(path)}"


@server.tool(task="optional")
async def job(path: str) -> str:
    """A task that ends once the file `path` exists."""
    await _opened(path)
    return f"worked {os.path.basename(path)}"
'''


@dataclass
class Worker:
    proc: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


def refused(port: int) -> bool:
    """True when a connection to the loopback `port` is refused (nothing listens), or
    reset: a probe that reached the queue just as the worker closed its listening socket
    (the worker was handed the only copy, so its queue goes with it)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except (ConnectionRefusedError, ConnectionResetError):
        return True
    return False


@contextlib.contextmanager
def worker(directory: Path, drain: float, env: dict[str, str] | None = None) -> Iterator[Worker]:
    """A worker of `SPEC` on a fresh loopback port, once it said it serves."""
    spec = directory / "drained.py"
    spec.write_text(SPEC)
    sock = socket.create_server(("127.0.0.1", 0))
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    read, write = os.pipe()
    cmd = [sys.executable, "-m", "mcpgen", "serve", f"{spec}:server", "--transport", "http"]
    cmd += ["--fd", str(sock.fileno()), "--ready-fd", str(write), "--drain-seconds", str(drain)]
    with (directory / "worker.log").open("a") as log:
        proc = subprocess.Popen(
            cmd,
            pass_fds=(sock.fileno(), write),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
    os.close(write)
    sock.close()  # the worker holds the only copy now
    try:
        ready, _, _ = select.select([read], [], [], 60)
        assert ready and os.read(read, 1) == b"1", (directory / "worker.log").read_text()
        yield Worker(proc, port)
    finally:
        os.close(read)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
