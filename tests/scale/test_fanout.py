"""bench/fanout.py at a small scale: every listen stream (and every legacy GET stream)
spread over two workers on one real Redis receives every list_changed exactly once,
whichever worker the change was made on. Not a timing test: the benchmark's figures
are in docs/performance.md."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.scale.harness import workers

pytestmark = pytest.mark.needs_redis

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fanout.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_fanout", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_every_listen_stream_hears_every_change_exactly_once() -> None:
    fanout = _bench()
    with workers() as (urls, _):
        targets = [fanout.Target("127.0.0.1", httpx.URL(u).port) for u in urls]
        result = asyncio.run(
            fanout.measure("listen", targets, targets, streams=50, rounds=4, tool="bump")
        )
    summary = result.summary()
    assert summary["expected"] == 200
    assert summary["delivered"] == 200 and summary["missing"] == 0
    assert len(result.round_max_ms) == 4


def test_every_legacy_get_stream_hears_every_change_exactly_once() -> None:
    fanout = _bench()
    with workers() as (urls, _):
        targets = [fanout.Target("127.0.0.1", httpx.URL(u).port) for u in urls]
        result = asyncio.run(
            fanout.measure(
                "legacy", targets, targets, streams=20, rounds=3, tool="bump", legacy=True
            )
        )
    assert result.summary()["delivered"] == 60 and result.missing == 0


def test_the_stream_reader_decodes_chunks_cut_anywhere() -> None:
    """The benchmark's hand-written HTTP reader: a response cut at every byte still
    yields the acknowledgement and each notification once."""
    fanout = _bench()
    event = b'data: {"method":"notifications/tools/list_changed"}\n\n'
    body = [b'data: {"method":"notifications/subscriptions/acknowledged"}\n\n', event, event]
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    wire += b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in body) + b"0\r\n\r\n"

    async def read() -> tuple[bool, int, bool]:
        stream = fanout.Stream(b"")
        for i in range(len(wire)):
            stream.data_received(wire[i : i + 1])
        return stream.acked.is_set(), len(stream.arrivals), stream.closed.is_set()

    assert asyncio.run(read()) == (True, 2, True)
