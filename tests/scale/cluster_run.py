"""examples/cluster/run.sh under test: start it, wait for its `ready` line, read
nginx's access log (which worker served which request), stop it and check that no
process it started is left."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import need
from tests.processes import free_port

REPO = Path(__file__).resolve().parents[2]
RUN_SH = REPO / "examples" / "cluster" / "run.sh"
_LINE = re.compile(
    r'"(?P<method>\S+) \S+ [^"]*" (?P<status>\d+) '
    r"upstream=(?P<up>[^,\s]+)[^=]* session=(?P<sid>\S*)"
)


def need_tools() -> None:
    for name in ("redis-server", "nginx"):
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/local/sbin")
        need(found is not None, name, name)


@dataclass
class Hit:
    method: str
    status: int
    upstream: str
    session: str


def read_hits(log: Path) -> list[Hit]:
    """The requests of an nginx access log written with `upstream=$upstream_addr
    session=$http_mcp_session_id` after the request and status, in order."""
    found = []
    for line in log.read_text().splitlines():
        match = _LINE.search(line)
        if match:
            sid = match["sid"]
            found.append(
                Hit(match["method"], int(match["status"]), match["up"], "" if sid == "-" else sid)
            )
    return found


@dataclass
class Cluster:
    url: str
    dir: Path
    proc: subprocess.Popen[str]

    def hits(self) -> list[Hit]:
        """The requests nginx has finished so far, in order."""
        return read_hits(self.dir / "access.log")

    def worker_pids(self) -> list[int]:
        """The worker processes (`mcpgen serve`) run.sh runs now."""
        return [
            pid for pid in descendants(self.proc.pid) if b"mcpgen\x00serve\x00" in _cmdline(pid)
        ]


def worker_port(pid: int) -> int:
    """The port the worker `pid` was told to serve (its `--port`)."""
    words = _cmdline(pid).split(b"\x00")
    return int(words[words.index(b"--port") + 1])


def refused(port: int) -> bool:
    """True once nothing accepts connections on the loopback `port` (a killed process
    is gone only once its last thread has exited and closed its sockets)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return True
    return False


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def descendants(root: int) -> set[int]:
    """Every live process below `root` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextlib.contextmanager
def cluster(
    workers: int,
    log: Path,
    timeout: float = 120.0,
    extra: Sequence[str] = (),
    port: int | None = None,
) -> Iterator[Cluster]:
    """run.sh with `workers` workers on `port` (else a free one), `extra` options
    added; its stderr goes to `log`."""
    need_tools()
    port = port or free_port()
    cmd = ["bash", str(RUN_SH), "--port", str(port), "--workers", str(workers)]
    cmd += ["--python", sys.executable, *extra]
    with log.open("w") as sink:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=sink, text=True
        )
    where = None
    try:
        where, url = _wait_ready(proc, log, timeout)
        yield Cluster(url, where, proc)
    finally:
        if where is not None and where.is_dir():  # kept beside `log` for a failing test
            for name in ("access.log", "nginx-error.log", "worker0.log", "worker1.log"):
                with contextlib.suppress(OSError):
                    shutil.copy(where / name, log.parent / name)
        stop(proc)


def _wait_ready(proc: subprocess.Popen[str], log: Path, timeout: float) -> tuple[Path, str]:
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    out = proc.stdout

    def pump() -> None:
        for line in out:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    where = None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        word, _, rest = line.strip().partition(" ")
        if word == "logs":
            where = Path(rest)
        elif word == "ready" and where is not None:
            return where, rest
    stop(proc)
    raise RuntimeError(f"run.sh did not get ready:\n{log.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen[str] | subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, sig)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
