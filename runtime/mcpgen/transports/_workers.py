"""Worker threads for sync handlers, so that a handler that blocks (a `time.sleep`, a
blocking HTTP library, a database driver) does not stop the event loop.

`ThreadRunner` is the `SyncRunner` a `Server` injects into its core. Its threads are
started as work arrives, up to a bound, and are daemon threads: a handler stuck for
good cannot keep the process from exiting. A job is a plain callable; its result or
exception is handed back to the loop that submitted it through
`call_soon_threadsafe`, in order with everything the job posted before it ended.

A handler given a `Context` may report progress and log from its thread: for the
duration of the job its call writes through `LoopChannel`, which posts each frame to
the loop's thread. Handlers running on the loop keep the transport's own channel and
pay nothing for this.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from mcpgen._server import Call, Channel, Handle

__all__ = ["LoopChannel", "ThreadRunner"]

T = TypeVar("T")
# (the loop's future, the job, the context it runs in); None tells a worker to stop.
_Job = tuple["asyncio.Future[Any]", Callable[[], Any], contextvars.Context] | None


class LoopChannel(Channel):
    """A request's channel as seen from a worker thread: every frame is posted to the
    event loop's thread, which writes it with the transport's channel."""

    def __init__(self, inner: Channel, loop: asyncio.AbstractEventLoop) -> None:
        self.inner = inner
        self.loop = loop
        self.headers = inner.headers
        self.principal = inner.principal

    def _post(self, write: Callable[[bytes], object], frame: bytes) -> None:
        # A closed loop has nobody left to read the frame.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(write, frame)

    def notify(self, frame: bytes) -> None:
        self._post(self.inner.notify, frame)

    def request(self, frame: bytes) -> None:
        self._post(self.inner.request, frame)

    def reply(self, frame: bytes) -> None:
        self._post(self.inner.reply, frame)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Handle:
        return self.inner.spawn(coro)  # only ever called on the loop's thread


def _resolve(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if not future.done():  # cancelled meanwhile: the request is gone
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)


class ThreadRunner:
    """A bounded pool of daemon worker threads, started on demand."""

    def __init__(self, workers: int, name: str = "mcpgen-sync") -> None:
        if workers < 1:
            raise ValueError("a thread runner needs at least one worker")
        self.workers = workers
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        # One token per idle worker (a C queue: cheaper per call than a Semaphore).
        self._idle: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def __call__(self, fn: Callable[[], T], call: Call | None) -> Awaitable[T]:
        """Queue `fn` at once; the awaitable resolves to what it returns or raises."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if call is None:  # no Context: the future itself, no coroutine around it
            self._submit((future, fn, contextvars.copy_context()))
            return future
        return self._with_context(future, fn, call, loop)

    async def _with_context(
        self,
        future: asyncio.Future[T],
        fn: Callable[[], T],
        call: Call,
        loop: asyncio.AbstractEventLoop,
    ) -> T:
        original = call.channel
        call.channel = LoopChannel(original, loop)
        self._submit((future, fn, contextvars.copy_context()))
        try:
            return await future
        finally:
            # A cancelled wait may leave the job running: its call keeps posting to the
            # loop (and is marked cancelled, so it mostly stays quiet).
            if not future.cancelled():
                call.channel = original

    def _submit(self, job: _Job) -> None:
        self._jobs.put(job)
        try:
            self._idle.get_nowait()  # an idle worker will take the job
        except queue.Empty:
            self._start_worker()

    def _start_worker(self) -> None:
        if len(self._threads) < self.workers:
            with self._lock:
                if len(self._threads) < self.workers:
                    thread = threading.Thread(
                        target=_work,
                        args=(self._jobs, self._idle),
                        name=f"{self.name}-{len(self._threads)}",
                        daemon=True,
                    )
                    self._threads.append(thread)
                    thread.start()

    def close(self) -> None:
        """Let the workers end once the jobs already queued are done; does not wait for
        them. The runner may be used again afterwards: new jobs go to a new queue, served
        by new threads."""
        with self._lock:
            threads, jobs = self._threads, self._jobs
            self._threads, self._jobs, self._idle = [], queue.SimpleQueue(), queue.SimpleQueue()
        for _ in threads:
            jobs.put(None)


def _work(jobs: queue.SimpleQueue[_Job], idle: queue.SimpleQueue[None]) -> None:
    """One worker: run jobs from `jobs` until told to stop; `idle` counts idle workers."""
    while True:
        job = jobs.get()
        if job is None:
            return
        future, fn, context = job
        del job
        if not future.cancelled():
            try:
                ok, value = True, context.run(fn)
            except BaseException as exc:  # handed to the awaiting coroutine as it is
                ok, value = False, exc
            with contextlib.suppress(RuntimeError):  # the loop is closed
                future.get_loop().call_soon_threadsafe(_resolve, future, ok, value)
            del future, fn, value
        idle.put(None)
