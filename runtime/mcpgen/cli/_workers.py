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

import contextlib
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
from typing import IO, TYPE_CHECKING, Any

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
_READY_SECONDS = 60.0  # a roll's new worker must serve within this, or the roll stops


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
    ready_fd: int  # the pipe's read end: one byte once the worker serves, EOF if it exits
    generation: int  # the roll it was started in: older ones are replaced by the next roll
    started: float = field(default_factory=time.monotonic)
    ready: bool = False

    def poll_ready(self) -> bool:
        """Whether the worker said it serves (the pipe is read without blocking)."""
        if not self.ready and self.ready_fd >= 0:
            try:
                said = os.read(self.ready_fd, 1)
            except BlockingIOError:
                return False
            self.ready = bool(said)
            if not said:  # EOF: it exited (or closed the pipe) without serving
                self.close()
        return self.ready

    def close(self) -> None:
        if self.ready_fd >= 0:
            os.close(self.ready_fd)
            self.ready_fd = -1


class Supervisor:
    """Starts the workers, keeps them running, rolls them on SIGHUP and stops them on
    SIGINT/SIGTERM.

    A roll replaces every worker started before the latest SIGHUP, one at a time: start
    a new worker, wait until it serves (it writes a byte to a pipe once it listens on the
    shared socket), SIGTERM one old worker (it drains: `mcpgen.transports._drain`), wait
    for its exit, next. A SIGHUP during a roll extends it to the workers started before
    that signal (the one starting meanwhile included). A new worker that does not start
    ends the roll: the old workers keep serving, and the next SIGHUP tries again."""

    def __init__(
        self, argv: list[str], sock: socket.socket, count: int, drain_seconds: float = 5.0
    ):
        self._argv = argv
        self._sock = sock
        self._count = count
        self._workers: list[_Worker] = []
        self._stopping = False
        self._hup = False
        self._rolling = False
        self._generation = 0
        self._incoming: _Worker | None = None  # the roll's new worker, until it serves
        self._retiring: tuple[_Worker, float] | None = None  # an old one, and its deadline
        # A drained worker exits within its drain time (twice: the app's, then uvicorn's).
        self._stop_grace = 2 * drain_seconds + _STOP_GRACE
        self.rolled = 0  # workers replaced by rolls so far

    def _spawn(self) -> _Worker:
        fd = self._sock.fileno()
        read, write = os.pipe()
        os.set_blocking(read, False)
        cmd = [*self._argv, "--fd", str(fd), "--ready-fd", str(write)]
        try:
            proc = subprocess.Popen(cmd, pass_fds=(fd, write))
        finally:
            os.close(write)
        return _Worker(proc, read, self._generation)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self._stopping = True

    def _roll_signal(self, signum: int, frame: FrameType | None) -> None:
        self._hup = True

    def run(self) -> int:
        """Serve until a signal (0) or a worker that cannot start (its exit status)."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._stop)
        signal.signal(signal.SIGHUP, self._roll_signal)
        self._workers = [self._spawn() for _ in range(self._count)]
        status = 0
        try:
            while not self._stopping:
                time.sleep(0.1)
                status = self._check()
                if status:
                    break
                self._roll()
        finally:
            self._shutdown()
            self._sock.close()
        return status

    def _check(self) -> int:
        for index, worker in enumerate(self._workers):
            worker.poll_ready()
            code = worker.proc.poll()
            if code is None or self._stopping:
                continue
            worker.close()
            # Killed by a signal (the OOM killer, kill -9) it is a crash, not a failed start.
            if code > 0 and time.monotonic() - worker.started < STARTUP_SECONDS:
                sys.stderr.write(f"mcpgen: a worker failed to start (status {code}); stopping\n")
                return code or 1
            sys.stderr.write(f"mcpgen: worker {worker.proc.pid} died (status {code}); restarting\n")
            self._workers[index] = self._spawn()
        return 0

    # -- rolling -------------------------------------------------------------------------------
    def _say(self, line: str) -> None:
        sys.stderr.write(f"mcpgen: {line}\n")
        sys.stderr.flush()

    def _old(self) -> list[_Worker]:
        return [w for w in self._workers if w.generation < self._generation]

    def _roll(self) -> None:
        """One step of a roll, if one is under way (called every tick)."""
        if self._hup:
            self._hup = False
            self._generation += 1
            self._rolling = True
            self._say(f"SIGHUP received, replacing {len(self._old())} workers one at a time")
        if self._retiring is not None:
            old, deadline = self._retiring
            code = old.proc.poll()
            if code is None and time.monotonic() < deadline:
                return
            if code is None:
                self._say(f"worker {old.proc.pid} did not stop in time; killed")
                old.proc.kill()
                code = old.proc.wait()
            self._say(f"worker {old.proc.pid} stopped (status {code})")
            self._retiring = None
        new = self._incoming
        if new is not None:
            self._await(new)
        elif self._old():
            self._incoming = self._spawn()
        elif self._rolling:
            self._rolling = False
            self._say(f"roll done: {self.rolled} workers replaced so far")

    def _await(self, new: _Worker) -> None:
        """The new worker serves: it takes an old one's place, which drains. It exited,
        or took too long: the roll ends, the old ones keep serving."""
        if new.poll_ready():
            self._incoming = None
            old = self._old()
            if not old:  # the old one died meanwhile and was restarted: not needed
                new.proc.send_signal(signal.SIGTERM)
                self._retiring = (new, time.monotonic() + self._stop_grace)
                return
            index = self._workers.index(old[0])
            self._workers[index] = new
            old[0].proc.send_signal(signal.SIGTERM)
            old[0].close()
            self._retiring = (old[0], time.monotonic() + self._stop_grace)
            self.rolled += 1
            return
        code = new.proc.poll()
        late = time.monotonic() - new.started > _READY_SECONDS
        if code is None and not late:
            return
        if code is None:
            new.proc.kill()
            code = new.proc.wait()
        new.close()
        self._incoming = None
        for worker in self._workers:  # no more replacing until the next SIGHUP
            worker.generation = self._generation
        self._rolling = False
        self._say(
            f"the new worker did not start (status {code}); roll stopped, "
            "the old workers keep serving"
        )

    def _shutdown(self) -> None:
        procs = [w.proc for w in self._workers]
        procs += [w.proc for w in (self._incoming,) if w is not None]
        procs += [self._retiring[0].proc] if self._retiring is not None else []
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self._stop_grace
        for proc in procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for worker in self._workers:
            worker.close()
        said = ", ".join(f"{proc.pid}: {proc.returncode}" for proc in procs)
        self._say(f"workers stopped (pid: status) {said}")


def _watch_parent() -> None:
    """Stop this worker (as SIGTERM would) once its supervisor is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="mcpgen-parent-watch", daemon=True).start()


def serve_socket(
    server: Server,
    fd: int,
    log_level: str = "warning",
    auth: AuthSettings | None = None,
    *,
    ready_fd: int | None = None,
    drain_seconds: float | None = None,
) -> None:
    """Serve `server` (Streamable HTTP) on the inherited listening socket `fd`, with
    `auth` (the same settings in every worker) when given. Once it serves, one byte
    goes to `ready_fd` (the supervisor's pipe). SIGTERM drains it within
    `drain_seconds` (else `HttpOptions.shutdown_grace_seconds`); it then exits 0."""
    from mcpgen.transports import uvicorn_server  # noqa: PLC0415 (needs the http extra)

    sock = socket.socket(fileno=fd)
    host, port = sock.getsockname()[:2]
    options: dict[str, Any] = {} if auth is None else {"auth": auth}
    if drain_seconds is not None:
        options["shutdown_grace_seconds"] = drain_seconds
    app = server.asgi_app(**options)

    def ready() -> None:
        if ready_fd is not None:
            with contextlib.suppress(OSError):
                os.write(ready_fd, b"1")
                os.close(ready_fd)

    http = uvicorn_server(app, host, port, log_level=log_level, ready=ready, signal_exit=False)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a roll is the supervisor's, not ours
    _watch_parent()
    try:
        http.run(sockets=[sock])
    except SystemExit:
        if app.life.failure is None:
            raise
    if app.life.failure is not None:
        raise SystemExit(f"mcpgen: {app.life.failure}") from None
