"""Subprocess servers for tests: a free loopback port, start-and-wait, stop."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "EVERYTHING",
    "LOOPBACK_ONLY",
    "everything_http",
    "free_port",
    "http_server",
    "stop",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill if it lingers; always reaps the process."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def http_server(
    command: Callable[[int], list[str]],
    log: Path,
    path: str = "/mcp",
    timeout: float = 30.0,
    cwd: Path | None = None,
) -> Iterator[str]:
    """Run `command(port)` (a server on 127.0.0.1:port; in `cwd` if given) until it accepts
    connections; yields its URL. Its output goes to `log` (shown by failing tests)."""
    port = free_port()
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command(port), stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, cwd=cwd
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the server exited early:\n{log.read_text(errors='replace')[-3000:]}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=0.2),
            ):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not listen within {timeout} s")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        stop(proc)


EVERYTHING = Path(__file__).resolve().parents[1] / "examples" / "everything.py"


def everything_http(log: Path) -> contextlib.AbstractContextManager[str]:
    """examples/everything.py over Streamable HTTP on a free loopback port; yields its URL."""
    return http_server(
        lambda port: [sys.executable, str(EVERYTHING), "--transport", "http", "--port", str(port)],
        log,
    )


# A Node preload: a server's listen() without a host binds the loopback interface only
# (server-everything's HTTP modes listen on every interface and take only a PORT).
LOOPBACK_ONLY = """
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = typeof args[0] === "number" || /^[0-9]+$/.test(String(args[0]));
  if (port && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
"""
