"""A rolling restart under load: examples/cluster/run.sh --supervised (Redis, nginx, one
`mcpgen serve --workers 3` behind it), SIGHUP to the supervisor while the mixed load of
`rolling_load` runs (legacy sessions, 2026-07-28 requests, a resumable legacy GET stream
hearing tool-list changes, a listen stream, tasks polled to their end, one task longer
than the drain time).

Asserted: no request failed (the only retries are the ones `rolling_load` names: a
connection that failed before its request was written); the GET stream heard every
change exactly once, its event ids contiguous across its reconnections; every task ended
truthfully (the short ones completed, the long one cancelled, saying it was the drain);
every worker was replaced; the rolled workers and, at the end, the supervisor and its
workers exited 0. The figures (requests, retries, p99 latency during and outside the
roll) are printed, and docs/performance.md quotes a run.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen import Client, ToolTask
from tests.scale.cluster_run import (
    Cluster,
    _cmdline,
    alive,
    cluster,
    descendants,
    refused,
    worker_port,
)
from tests.scale.rolling_load import TERMINAL, Load, changes_heard, p99

pytestmark = [pytest.mark.slow, pytest.mark.needs_redis, pytest.mark.needs_nginx]

ROLL_BOUND = 240.0  # seconds: three workers started and drained one at a time, loaded
LOAD_AROUND = 4.0  # seconds of load before the SIGHUP and after the roll


def _supervisor(running: Cluster) -> int:
    def supervises(pid: int) -> bool:  # (a fork of run.sh itself has --workers too)
        line = _cmdline(pid)
        return b"mcpgen\x00serve\x00" in line and b"\x00--workers\x00" in line

    (pid,) = [p for p in descendants(running.proc.pid) if supervises(p)]
    return pid


def _workers(supervisor: int) -> set[int]:
    return {p for p in descendants(supervisor) if b"\x00--fd\x00" in _cmdline(p)}


def _wait_for(path: Path, pattern: str, seconds: float) -> re.Match[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text() if path.exists() else "")
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"no {pattern!r} in {path} after {seconds} s")


def _numbers(event_ids: list[str]) -> list[int]:
    """The sequence numbers of a session log's event ids (`<log key>.<n>`)."""
    assert len({eid.rpartition(".")[0] for eid in event_ids}) == 1, event_ids
    return [int(eid.rpartition(".")[2]) for eid in event_ids]


@dataclass
class Outcome:
    load: Load
    began: float  # when the roll began and ended (monotonic)
    ended: float
    long: Any  # the long task's last status


async def _under_load(url: str, roll: Callable[[], None]) -> Outcome:
    """The mixed load, `roll` (blocking, run in a thread) in its middle."""
    limits = httpx.Limits(max_connections=20)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        load = Load(http, url)
        async with Client.http(url, era="modern") as client:
            long = await client.call_tool("slow_compute", {"seconds": 600}, task=True)
        assert isinstance(long, ToolTask)
        stream = await load.session()
        assert stream is not None
        loops = [load.legacy("a"), load.legacy("b"), load.modern("m"), load.modern("n")]
        loops += [load.changes(stream), load.run_tasks(0.5)]
        running_loops = [asyncio.ensure_future(loop) for loop in loops]
        streams = [asyncio.ensure_future(s) for s in (load.follow(stream), load.listen())]
        await asyncio.sleep(LOAD_AROUND)
        began = time.monotonic()
        await asyncio.to_thread(roll)
        ended = time.monotonic()
        await asyncio.sleep(LOAD_AROUND)
        load.stop.set()
        await asyncio.wait_for(asyncio.gather(*running_loops), 60)
        await asyncio.sleep(1.5)  # the last changes reach the stream
        for open_stream in streams:  # (they wait for events: the client leaves)
            open_stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        async with Client.http(url, era="modern") as client:
            await load.poll(client, long.id, 30)
        return Outcome(load, began, ended, load.tasks[long.id])


def _nothing_dropped(outcome: Outcome, layout: str) -> None:
    """The figures printed, and what the load must have seen."""
    load, began, ended, long_status = outcome.load, outcome.began, outcome.ended, outcome.long
    during = [s for t, s in load.timings if began <= t <= ended]
    outside = [s for t, s in load.timings if not began <= t <= ended]
    heard = changes_heard(load)
    # (a stream's priming event, an id without data, takes its number in the log too)
    numbers = _numbers([eid for eid, _ in load.stream if eid])
    short = [s for s in load.tasks.values() if s is not long_status]
    print(
        f"\nrolling restart ({layout}): roll {ended - began:.1f} s, {load.requests} requests "
        f"({len(during)} during the roll), {load.retries} retries, {len(load.failures)} failed; "
        f"p99 {p99(during) * 1000:.0f} ms during, {p99(outside) * 1000:.0f} ms outside; "
        f"GET stream: {len(heard)} changes, {load.reconnects} reconnections; "
        f"listen streams {len(load.listens)}; tasks {len(short)}"
    )
    assert not load.failures, load.failures[:10]
    assert load.requests > 100 and during
    # The resumable stream: every change heard once, no event id skipped or repeated.
    assert len(heard) == load.changes_made, (len(heard), load.changes_made)
    assert sorted(numbers) == list(range(min(numbers), min(numbers) + len(numbers))), numbers
    # In order: ids strictly increasing as they arrive, priming events included (a
    # priming id is given in the claim of the log, docs/guide/scale-out.md).
    assert all(before < after for before, after in itertools.pairwise(numbers)), numbers
    assert load.reconnects >= 1  # its worker was rolled: it resumed on another
    # Listen streams end with their final result when their worker drains.
    assert load.listens and all(how == "result" for how in load.listens), load.listens
    # Tasks: the short ones completed wherever they ran; the long one did not lie.
    assert short and all(s.status == "completed" for s in short), short
    assert long_status.status == "cancelled", long_status
    assert "drain time" in (long_status.status_message or "")
    assert all(s.status in TERMINAL for s in load.tasks.values())


def test_rolling_all_workers_under_load_drops_nothing(tmp_path: Path) -> None:
    """`mcpgen serve --workers 3` behind nginx, rolled by SIGHUP."""
    with cluster(3, tmp_path / "run.log", extra=["--supervised"]) as running:
        supervisor = _supervisor(running)
        log = running.dir / "worker0.log"
        deadline = time.monotonic() + 60
        while len(_workers(supervisor)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        before = _workers(supervisor)
        assert len(before) == 3

        def roll() -> None:
            os.kill(supervisor, signal.SIGHUP)
            _wait_for(log, r"roll done", ROLL_BOUND)

        outcome = asyncio.run(_under_load(running.url, roll))
        after = _workers(supervisor)
        rolled = re.findall(r"worker (\d+) stopped \(status (-?\d+)\)", log.read_text())
        os.kill(supervisor, signal.SIGTERM)  # (run.sh would start it again: already read)
        stopped = _wait_for(log, r"workers stopped \(pid: status\) (.*)", 60)
        exited = _wait_for(tmp_path / "run.log", r"worker0 exited \(status (\d+)\)", 30)

    _nothing_dropped(outcome, "mcpgen serve --workers 3, SIGHUP")
    # Every worker replaced, each drained worker exited 0, then all of them at the end.
    assert len(after) == 3 and not before & after, (before, after)
    assert {int(pid) for pid, _ in rolled} >= before and {s for _, s in rolled} == {"0"}, rolled
    statuses = [item.split(": ")[1] for item in stopped.group(1).split(", ")]
    assert statuses == ["0", "0", "0"], stopped.group(0)
    assert exited.group(1) == "0"


def test_sigterm_to_each_worker_on_its_own_port_drops_nothing(tmp_path: Path) -> None:
    """run.sh's default layout, a port per worker (nginx has three upstreams), rolled by
    hand: SIGTERM one worker, wait for its exit (run.sh starts a new one on that port),
    wait until the new one listens, next. While a worker drains, its port refuses
    connections and nginx passes each request on to the next worker."""
    with cluster(3, tmp_path / "run.log") as running:
        before = set(running.worker_pids())
        assert len(before) == 3

        def roll() -> None:
            for pid in sorted(before):
                port = worker_port(pid)
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + ROLL_BOUND / 3
                while alive(pid) or refused(port):  # gone, and its successor listens
                    assert time.monotonic() < deadline, f"worker on {port} not replaced"
                    time.sleep(0.1)

        outcome = asyncio.run(_under_load(running.url, roll))
        after = set(running.worker_pids())
        exits = re.findall(r"worker\d exited \(status (\d+)\)", (tmp_path / "run.log").read_text())

    _nothing_dropped(outcome, "a port per worker, SIGTERM one by one")
    assert len(after) == 3 and not before & after, (before, after)
    # A single `mcpgen serve` exits by the signal after its drain (143 in a shell).
    assert exits == ["143", "143", "143"], exits
