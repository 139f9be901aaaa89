"""`mcpgen serve --workers 2` rolls its workers on SIGHUP (no Redis: `--allow-memory`, the
requests here are stateless modern ones): a second SIGHUP during a roll extends it to
every worker started before it; a new worker that cannot start (a broken deploy) stops
the roll and the old workers keep serving, until a later SIGHUP rolls them; SIGTERM
then stops everything with status 0."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.processes import free_port
from tests.scale.cluster_run import _cmdline, descendants
from tests.scale.drain_worker import SPEC
from tests.scale.test_drain import _call

pytestmark = pytest.mark.slow


def _wait(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _workers(supervisor: int) -> set[int]:
    return {p for p in descendants(supervisor) if b"\x00--fd\x00" in _cmdline(p)}


class Supervised:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path, gate: Path):
        self.proc, self.port, self.log, self.gate = proc, port, log, gate

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def text(self) -> str:
        return self.log.read_text()

    def serves(self) -> bool:
        try:
            answer = _call(self.url, "gate", {"path": str(self.gate)})
        except httpx.HTTPError:
            return False
        return answer.status_code == 200 and "passed" in answer.text

    def count(self, pattern: str) -> int:
        return len(re.findall(pattern, self.text()))


@contextmanager
def supervised(tmp_path: Path) -> Iterator[Supervised]:
    spec = tmp_path / "app.py"
    spec.write_text(SPEC)
    gate = tmp_path / "open"
    gate.touch()
    port = free_port()
    log = tmp_path / "serve.log"
    cmd = [sys.executable, "-m", "mcpgen", "serve", f"{spec}:server", "--transport", "http"]
    cmd += ["--workers", "2", "--allow-memory", "--port", str(port)]
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
    running = Supervised(proc, port, log, gate)
    try:
        _wait(lambda: len(_workers(proc.pid)) == 2 and running.serves(), "two workers serve")
        yield running
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _roll_then_stop(running: Supervised) -> tuple[set[int], int]:
    """SIGHUP, the roll's end, a request served, SIGTERM: (the workers after the roll,
    the supervisor's exit status)."""
    running.proc.send_signal(signal.SIGHUP)
    _wait(lambda: "roll done" in running.text(), "the roll ends")
    after = _workers(running.proc.pid)
    assert running.serves()
    running.proc.send_signal(signal.SIGTERM)
    return after, running.proc.wait(60)


def test_a_second_sighup_during_a_roll_extends_it(tmp_path: Path) -> None:
    with supervised(tmp_path) as running:
        pid = running.proc.pid
        before = _workers(pid)
        running.proc.send_signal(signal.SIGHUP)
        _wait(lambda: len(_workers(pid)) == 3, "a new worker starts beside the old ones")
        at_second = _workers(pid)  # the old ones and the new one starting, then SIGHUP
        after, status = _roll_then_stop(running)
    text = running.text()
    assert status == 0, text
    assert len(after) == 2 and not after & at_second and not after & before, text
    assert running.count(r"SIGHUP received") == 2 and running.count(r"roll done") == 1, text
    drained = re.findall(r"worker (\d+) stopped \(status (-?\d+)\)", text)
    assert {int(p) for p, _ in drained} == at_second and {s for _, s in drained} == {"0"}, text
    assert re.search(r"workers stopped \(pid: status\) \d+: 0, \d+: 0\n", text), text


def test_a_worker_that_cannot_start_stops_the_roll_and_the_old_ones_serve_on(
    tmp_path: Path,
) -> None:
    with supervised(tmp_path) as running:
        pid = running.proc.pid
        before = _workers(pid)
        spec = tmp_path / "app.py"
        spec.write_text('raise RuntimeError("a broken deploy")\n')
        running.proc.send_signal(signal.SIGHUP)
        _wait(lambda: "roll stopped" in running.text(), "the roll stops")
        assert _workers(pid) == before and running.serves()
        spec.write_text(SPEC)  # the deploy mended: the next SIGHUP rolls them
        after, status = _roll_then_stop(running)
    text = running.text()
    assert status == 0, text
    assert re.search(r"the new worker did not start \(status [1-9]\d*\); roll stopped", text)
    assert len(after) == 2 and not after & before, text
