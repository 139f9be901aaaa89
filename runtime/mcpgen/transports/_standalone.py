"""A legacy session's standalone (GET) stream when several workers share the bus and
the event store (Redis).

A session is live on every worker a request of it reached, and each of those workers
receives every bus event and makes the same frame of it for the session (a
list_changed, an update of a resource it subscribed to). Kept in each worker's own
backlog, such a frame would reach the client once from the worker holding the GET
stream and again, stale, from any other worker the client later opens a GET on.

So the frames go through one log per session in the event store, the stream
`<session id>/get`: every worker hands each frame in under the id of the bus event it
came from (`RedisBus.dispatching`, the same on every worker), the store keeps it once,
and the first worker with an open GET stream to claim it writes it; the others write
nothing. A GET that opens, on any worker, first claims what no stream has carried yet
(or, with a `Last-Event-ID` of the log, everything after it), then goes on live. When
that leaves it nothing to send, the same claim appends its priming event: so the
priming id comes after every frame handed in before the claim and before every frame
handed in after it, by any worker, and a client resuming from it misses nothing. Per
worker, one courier hands the frames in, in bus order and many in one round trip, and
an opening GET takes its turn in the courier's queue; so the log's order is the bus's,
and an event is never both in an opening GET's backlog and written live by it.

A frame claimed by a stream that closed before writing it is not sent to a GET without
`Last-Event-ID`; a 2025-11-25 client reconnects with one and gets it by replay.

Handing every frame in from every worker would cost Redis one delivery per session per
worker per change. So a store that can (`RedisEventStore`) also keeps an index of the
logs a worker streams: an opening GET records, in its claim, that this worker streams
the log from the bus's current sequence number on, and the stream's end (the last one
of the session here) erases it. A worker without a stream hands a frame in only when
no other worker that is still subscribed to the bus streams the log since before the
event: that worker receives the event too and hands it in itself. So a change costs one
delivery per listening session, made by the worker holding its stream, plus a cheap
check per held session without a stream here; and sessions nobody listens to are kept
for their next GET as before. A killed worker drops its subscription at once, so the
others hand its sessions' frames in again from the next event on; an event the others
skipped in the instant before, which it had not handed in yet, is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from functools import partial
from typing import Any, Protocol, cast

from mcpgen._server._state import random_token
from mcpgen.stores import EventStore, Replay, StoreUnavailableError
from mcpgen.stores._events import Delivery
from mcpgen.transports._asgi import ResponseStream, Send, SseWriter

__all__ = ["Standalone", "log_id", "missed_events", "new_stream_id", "owns"]

log = logging.getLogger("mcpgen.server")


class SharedLog(EventStore, Protocol):
    """An event store that also keeps logs (`InMemoryEventStore`, `RedisEventStore`)."""

    async def deliver_many(self, items: Sequence[Delivery]) -> list[tuple[str, bool]]: ...

    async def claim(
        self, stream_id: str, after: str | None = None, *, prime: bool = False
    ) -> list[tuple[str, bytes]] | None: ...


class IndexedLog(SharedLog, Protocol):
    """A shared log that also knows which worker streams each log (`RedisEventStore`)."""

    async def hand_in(
        self, items: Sequence[tuple[str, str, bytes, bool, int]], worker: str = ""
    ) -> list[tuple[str | None, bool]]: ...

    async def claim(
        self, stream_id: str, after: str | None = None, *, worker: str = "", prime: bool = False
    ) -> list[tuple[str, bytes]] | None: ...

    async def release(self, stream_id: str, worker: str) -> None: ...


class _SharedBus(Protocol):
    @property
    def dispatching(self) -> bytes | None: ...
    @property
    def sequence(self) -> int: ...
    @property
    def worker(self) -> str: ...


class _Live(Protocol):
    id: str
    streams: list[ResponseStream]


class _Spawner(Protocol):
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


def new_stream_id(session_id: str) -> str:
    return f"{session_id}/{random_token(9)}"


def log_id(session_id: str) -> str:
    """The event-store stream of a session's standalone frames (a session id holds
    no `/`, a `new_stream_id` suffix is longer)."""
    return f"{session_id}/get"


def owns(session_id: str, stream_id: str) -> bool:
    """Whether the event stream `stream_id` belongs to the session `session_id`."""
    return stream_id.startswith(session_id + "/")


async def missed_events(events: EventStore, session_id: str, last_event_id: str) -> Replay | None:
    """What a client resuming after `last_event_id` missed, if it names a stream of
    `session_id` the store still holds."""
    missed = await events.replay(last_event_id)
    if missed is None or not owns(session_id, missed.stream_id):
        return None  # unknown, forgotten, or another session's stream
    return missed


class LogWriter(SseWriter):
    """Writes the items of a standalone stream: `<event id>\\n<frame>`, the id from the
    log (on the wire only in a resumable session)."""

    def __init__(
        self,
        send: Send,
        retry_ms: int,
        events: SharedLog | None,
        ids: bool,
        ended: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(send, retry_ms, events, "")
        self.ids = ids
        self.ended = ended

    async def end(self) -> None:
        try:
            await super().end()
        finally:
            if self.ended is not None:
                await self.ended()

    async def event(self, frame: bytes) -> None:
        event_id, _, data = frame.partition(b"\n")
        if not data:
            return
        head = b"id: " + event_id + b"\n" if self.ids else b""
        await self._chunk(head + b"event: message\ndata: " + data + b"\n\n")


class Standalone:
    """The standalone streams of one app's legacy sessions, over the shared log.

    One courier task per worker hands the frames in, in bus order, as many as are
    waiting in one round trip (a change reaches every session at once); an opening GET
    takes its turn in the same queue, so it never races a frame of its own session."""

    def __init__(self, bus: _SharedBus, events: SharedLog, spawner: _Spawner) -> None:
        self.bus = bus
        self.events = events
        self.spawner = spawner
        # Sessions streamed elsewhere are skipped by the store (the module docstring).
        self.index = _index_of(bus, events)
        self._queue: deque[_Item | _Turn] = deque()
        self._running = False
        self._event: bytes | None = None  # the bus event frames were last handed in for
        self._count: dict[str, int] = {}  # frames handed in for it, by session

    @classmethod
    def of(cls, bus: object, events: object, spawner: _Spawner) -> Standalone | None:
        """One when the bus tells its events apart and the store keeps logs, else
        None (one process: the session's own backlog is right)."""
        if not hasattr(bus, "dispatching") or not callable(getattr(events, "claim", None)):
            return None
        return cls(bus, events, spawner)  # type: ignore[arg-type]

    def hand_in(self, live: _Live, frame: bytes) -> bool:
        """Take a session-level frame if it came from a bus event (True), else leave it
        to the caller (False)."""
        event = self.bus.dispatching
        if event is None:
            return False
        if event != self._event:
            self._event, self._count = event, {}
        # Every worker makes the same frame of a change for a session: one per event.
        # An event that makes more (a reply running on) does so on one worker only.
        n = self._count[live.id] = self._count.get(live.id, -1) + 1
        self._queue.append((live, f"{event.hex()}.{n}", frame, self.bus.sequence))
        self._start()
        return True

    def _start(self) -> None:
        if not self._running:
            self._running = True
            self.spawner.spawn(self._courier())

    async def _courier(self) -> None:
        try:
            while self._queue:
                head = self._queue.popleft()
                if isinstance(head, _Turn):
                    await head.run()
                    continue
                batch = [head]
                while self._queue and len(batch) < _BATCH:
                    item = self._queue[0]
                    if isinstance(item, _Turn):
                        break
                    batch.append(item)
                    self._queue.popleft()
                await self._deliver(batch)
        finally:
            self._running = False  # (no await since the queue was last seen empty)

    async def _deliver(self, batch: list[_Item]) -> None:
        done: Sequence[tuple[str | None, bool]]
        try:
            items = [
                (log_id(live.id), key, frame, bool(live.streams), seq)
                for live, key, frame, seq in batch
            ]
            if self.index is not None:
                done = await self.index.hand_in(items, self.bus.worker)
            else:  # the sequence number only matters to the index
                done = await self.events.deliver_many([item[:4] for item in items])
        except StoreUnavailableError as exc:
            log.warning("%d session-level notifications were lost: %s", len(batch), exc)
            return
        except Exception:  # the courier must go on: GETs wait in its queue
            log.exception("%d session-level notifications were lost", len(batch))
            return
        for (live, _, frame, _), (event_id, claimed) in zip(batch, done, strict=True):
            if claimed and event_id and live.streams:
                live.streams[-1].notify(event_id.encode() + b"\n" + frame)

    async def open(
        self,
        live: _Live,
        stream: ResponseStream,
        send: Send,
        retry_ms: int,
        last_event_id: str | None,
        replayed: list[tuple[str, bytes]] | None,
        resumable: bool,
    ) -> tuple[LogWriter, bytes | None, list[tuple[str, bytes]]]:
        """Register `stream` as `live`'s newest GET stream; returns its writer, the
        priming event to start with (or None) and what to replay first: `replayed`
        (the events of another stream, after a `Last-Event-ID` of it), or the log's
        events after `last_event_id`, then what no stream has carried yet."""
        turn = _Turn(self._open(live, stream, retry_ms, last_event_id, replayed, resumable))
        self._queue.append(turn)
        self._start()
        try:
            first, events = await turn.done
        except BaseException:  # the client went away (or the store): the stream is dead
            stream.closed = True
            if stream in live.streams:
                live.streams.remove(stream)
            if self.index is not None:
                self.spawner.spawn(self._release(live))
            raise
        ended = None if self.index is None else lambda: self._release(live)
        events_of = self.events if resumable else None
        writer = LogWriter(send, retry_ms, events_of, resumable, ended)
        if not resumable:  # no ids to replay with: the backlog goes out as live events
            stream.events.extend(eid.encode() + b"\n" + f for eid, f in events if f)
            events = []
        return writer, first, events

    async def _open(
        self,
        live: _Live,
        stream: ResponseStream,
        retry_ms: int,
        last_event_id: str | None,
        replayed: list[tuple[str, bytes]] | None,
        resumable: bool,
    ) -> tuple[bytes | None, list[tuple[str, bytes]]]:
        stream_id = log_id(live.id)
        events: list[tuple[str, bytes]] = list(replayed or ())
        after = last_event_id if replayed is None else None
        index, worker = self.index, self.bus.worker
        claim = self.events.claim if index is None else partial(index.claim, worker=worker)
        # The priming event takes its id in the claim itself: after every event handed
        # in before it, before any handed in after (by this worker or another).
        prime = resumable and not any(frame for _, frame in events)
        found = await claim(stream_id, after, prime=prime) if after is not None else None
        if found is None:
            found = await claim(stream_id, prime=prime)
        first = None
        if prime and found and not any(frame for _, frame in found):
            primed = found.pop()[0]  # (the store returns it alone)
            first = b"id: %s\nretry: %d\ndata: \n\n" % (primed.encode(), retry_ms)
        events += found or []
        if not stream.closed:  # (its GET may have ended while this waited its turn)
            live.streams.append(stream)
        return first, events

    async def _release(self, live: _Live) -> None:
        """A stream of `live` ended: when it was the last here, others hand in again."""
        if live.streams or self.index is None:
            return
        try:
            await self.index.release(log_id(live.id), self.bus.worker)
        except Exception as exc:  # it stays marked as streamed here while this worker lives
            log.warning("session %s: stream index not updated: %s", live.id[:8], exc)


def _index_of(bus: object, events: SharedLog) -> IndexedLog | None:
    """`events` when it keeps the index of streamed logs and the bus numbers its events."""
    if not hasattr(bus, "worker") or not callable(getattr(events, "release", None)):
        return None
    return cast("IndexedLog", events)


_BATCH = 1000  # frames handed in per round trip
_Item = tuple[_Live, str, bytes, int]  # a session, the dedup key, the frame, the bus sequence


class _Turn:
    """Work that must run between two frames of the courier's queue."""

    def __init__(self, work: Coroutine[Any, Any, Any]) -> None:
        self.work = work
        self.done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def run(self) -> None:
        try:
            result = await self.work
        except BaseException as exc:  # the opening GET answers it (a 503, a disconnect)
            if not self.done.done():
                self.done.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        if not self.done.done():
            self.done.set_result(result)
