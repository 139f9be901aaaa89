"""`mcpgen serve --workers N`: N processes serving one listening socket.

The parent binds the socket, then starts N copies of `python -m mcpgen serve SPEC
--transport http --fd K` that inherit it; the kernel hands each new connection to
whichever worker accepts first. A shared socket rather than uvicorn's own `workers=`
because uvicorn needs an import string for that, and because the parent stays a plain
supervisor: it forwards SIGINT/SIGTERM, restarts a worker killed by a signal or dying
once serving, and gives up (stopping the others) when one exits with an error while
starting, which is a startup error every copy would repeat. A worker whose parent
disappears stops itself, so a killed supervisor leaves no server behind.

Every worker inherits the parent's environment: `MCPGEN_REDIS_URL` for the shared
stores and the same `MCPGEN_STATE_KEYS` (generated for this run when unset), without
which a token sealed by one worker is refused by the next.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import IO, TYPE_CHECKING

from mcpgen.server._server import Server
from mcpgen.stores import InMemoryKeyRing

if TYPE_CHECKING:
    from mcpgen.auth._metadata import AuthSettings

__all__ = ["REDIS_ENV", "Supervisor", "bind", "serve_socket", "share_state_keys"]

REDIS_ENV = "MCPGEN_REDIS_URL"
_KEYS_ENV = "MCPGEN_STATE_KEYS"
# A worker that exits sooner than this after its start failed to start: restarting it
# would fail the same way.
STARTUP_SECONDS = 10.0
_STOP_GRACE = 15.0


def share_state_keys(warn: IO[str]) -> None:
    """Make sure this process and the workers it starts hold the same state keys:
    `MCPGEN_STATE_KEYS` as given, or one generated for this run (with a warning:
    another host, or the next run, would not know it)."""
    if os.environ.get(_KEYS_ENV):
        InMemoryKeyRing.from_env()  # refuse short keys here, not in every worker
        return
    os.environ[_KEYS_ENV] = secrets.token_urlsafe(32)
    warn.write(
        f"mcpgen: warning: {_KEYS_ENV} is unset; generated a key for this run's workers. "
        "Workers on several hosts, or tokens that must outlive this run, need the same "
        f"{_KEYS_ENV} set everywhere.\n"
    )


def bind(host: str, port: int) -> socket.socket:
    """The listening socket every worker inherits."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=2048)
    sock.set_inheritable(True)
    return sock


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    started: float = field(default_factory=time.monotonic)


class Supervisor:
    """Starts the workers, keeps them running and stops them on SIGINT/SIGTERM."""

    def __init__(self, argv: list[str], sock: socket.socket, count: int):
        self._argv = argv
        self._sock = sock
        self._count = count
        self._workers: list[_Worker] = []
        self._stopping = False

    def _spawn(self) -> _Worker:
        fd = self._sock.fileno()
        cmd = [*self._argv, "--fd", str(fd)]
        return _Worker(subprocess.Popen(cmd, pass_fds=(fd,)))

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True

    def run(self) -> int:
        """Serve until a signal (0) or a worker that cannot start (its exit status)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)
        self._workers = [self._spawn() for _ in range(self._count)]
        status = 0
        try:
            while not self._stopping:
                time.sleep(0.2)
                status = self._check()
                if status:
                    break
        finally:
            self._shutdown()
            self._sock.close()
        return status

    def _check(self) -> int:
        for index, worker in enumerate(self._workers):
            code = worker.proc.poll()
            if code is None or self._stopping:
                continue
            # Killed by a signal (the OOM killer, kill -9) it is a crash, not a failed start.
            if code > 0 and time.monotonic() - worker.started < STARTUP_SECONDS:
                sys.stderr.write(f"mcpgen: a worker failed to start (status {code}); stopping\n")
                return code or 1
            sys.stderr.write(f"mcpgen: worker {worker.proc.pid} died (status {code}); restarting\n")
            self._workers[index] = self._spawn()
        return 0

    def _shutdown(self) -> None:
        for worker in self._workers:
            if worker.proc.poll() is None:
                worker.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + _STOP_GRACE
        for worker in self._workers:
            try:
                worker.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()


def _watch_parent() -> None:
    """Stop this worker (as SIGTERM would) once its supervisor is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="mcpgen-parent-watch", daemon=True).start()


def serve_socket(
    server: Server, fd: int, log_level: str = "warning", auth: AuthSettings | None = None
) -> None:
    """Serve `server` (Streamable HTTP) on the inherited listening socket `fd`, with
    `auth` (the same settings in every worker) when given."""
    from mcpgen.transports import uvicorn_server  # noqa: PLC0415 (needs the http extra)

    sock = socket.socket(fileno=fd)
    host, port = sock.getsockname()[:2]
    app = server.asgi_app() if auth is None else server.asgi_app(auth=auth)
    http = uvicorn_server(app, host, port, log_level=log_level)
    _watch_parent()
    try:
        http.run(sockets=[sock])
    except SystemExit:
        if app.life.failure is None:
            raise
    if app.life.failure is not None:
        raise SystemExit(f"mcpgen: {app.life.failure}") from None
