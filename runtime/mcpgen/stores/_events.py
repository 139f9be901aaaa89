"""The events of resumable SSE streams in this process's memory: the `EventStore` of
one worker.

Besides `append` and `replay`, a stream can serve as a log that several writers feed
and one reader drains exactly once (`deliver`, `claim`): a legacy session's
standalone stream, fed by every worker that holds the session (`transports/_standalone`).
"""

from __future__ import annotations

import base64
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence

from mcpgen.stores._interfaces import Replay

__all__ = ["Delivery", "InMemoryEventStore"]

Delivery = tuple[str, str, bytes, bool]  # stream id, dedup key, frame, claim (`deliver`)


class _Stream:
    __slots__ = ("done", "events", "id", "key", "keys", "last", "touched")

    def __init__(self, stream_id: str, key: str, now: float) -> None:
        self.id = stream_id
        self.key = key  # the prefix of its event ids
        self.events: deque[tuple[int, bytes]] = deque()  # (sequence number, frame)
        self.last = 0  # the sequence number of its newest event
        self.touched = now
        self.done = 0  # events up to this one are claimed (`claim`, `deliver`)
        self.keys: OrderedDict[str, int] = OrderedDict()  # `deliver` keys -> sequence


class InMemoryEventStore:
    """Events by stream, bounded three ways: a stream keeps its newest `max_per_stream`
    events, the store its newest `max_events` in all (the least recently appended-to
    stream gives up its oldest first), and a stream nobody appended to for `ttl`
    seconds (by `clock`) is forgotten.

    An event id is `<stream key>.<sequence number>`: the key, random per stream, finds
    the stream, so ids are unique across streams (and across restarts) without a
    table from id to stream. A replay from an id older than what the stream still
    holds is refused (None) rather than answered with a gap the client cannot see."""

    def __init__(
        self,
        *,
        max_per_stream: int = 1_000,
        max_events: int = 100_000,
        ttl: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_per_stream = max_per_stream
        self.max_events = max_events
        self.ttl = ttl
        self.clock = clock
        self._streams: OrderedDict[str, _Stream] = OrderedDict()  # least recently appended first
        self._by_key: dict[str, _Stream] = {}
        self._total = 0

    def __len__(self) -> int:
        """Events held, over every stream."""
        return self._total

    async def append(self, stream_id: str, frame: bytes) -> str:
        stream = self._append(stream_id, frame)
        return f"{stream.key}.{stream.last}"

    def _append(self, stream_id: str, frame: bytes) -> _Stream:
        now = self.clock()
        self._forget_idle(now)
        stream = self._streams.get(stream_id)
        if stream is None:
            key = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
            stream = self._streams[stream_id] = self._by_key[key] = _Stream(stream_id, key, now)
        else:
            stream.touched = now
            self._streams.move_to_end(stream_id)
        stream.last += 1
        stream.events.append((stream.last, frame))
        self._total += 1
        if len(stream.events) > self.max_per_stream:
            stream.events.popleft()
            self._total -= 1
        while self._total > self.max_events:
            oldest = next(iter(self._streams.values()))
            oldest.events.popleft()
            self._total -= 1
            if not oldest.events:
                self._drop(oldest)
        return stream

    async def replay(self, last_event_id: str) -> Replay | None:
        key, _, number = last_event_id.rpartition(".")
        stream = self._by_key.get(key)
        if stream is None or not (number.isascii() and number.isdigit()) or len(number) > 18:
            return None
        if self.clock() - stream.touched > self.ttl:
            self._drop(stream)
            return None
        after = int(number)
        oldest = stream.events[0][0] if stream.events else stream.last + 1
        if not oldest - 1 <= after <= stream.last:
            return None  # never issued, or events after it were already let go
        return Replay(
            stream.id,
            [(f"{key}.{seq}", frame) for seq, frame in stream.events if seq > after],
        )

    async def deliver(
        self, stream_id: str, key: str, frame: bytes, claim: bool
    ) -> tuple[str, bool]:
        """Append `frame` unless an event was appended under `key` already (several
        writers hand in the same event); returns the event's id and, with `claim`,
        whether this call claimed it (nobody had: the caller is the one to send it)."""
        stream = self._streams.get(stream_id)
        seq = None if stream is None else stream.keys.get(key)
        if seq is None:
            stream = self._append(stream_id, frame)
            seq = stream.last
            event_id = f"{stream.key}.{seq}"
            stream.keys[key] = seq
            if len(stream.keys) > self.max_per_stream:
                stream.keys.popitem(last=False)
        else:
            assert stream is not None
            event_id = f"{stream.key}.{seq}"
        if claim and seq > stream.done:
            stream.done = seq
            return event_id, True
        return event_id, False

    async def deliver_many(self, items: Sequence[Delivery]) -> list[tuple[str, bool]]:
        """`deliver` each of `items`, in order."""
        return [await self.deliver(*item) for item in items]

    async def claim(
        self, stream_id: str, after: str | None = None, *, prime: bool = False
    ) -> list[tuple[str, bytes]] | None:
        """Claim every event of `stream_id` not claimed yet, and return them with (when
        `after`, an event id of this stream, is given) the events after it, oldest
        first. None when `after` is not an id this stream can replay from.

        With `prime`, when none of those events has a frame, the same step appends an
        empty one (the priming event of the stream that claims), claimed, and returns
        it alone: its id comes after every event handed in before the claim, and every
        event handed in after it gets a later one."""
        found = self._claim(stream_id, after)
        if found is None or not prime or any(frame for _, frame in found):
            return found
        stream = self._append(stream_id, b"")
        stream.done = stream.last
        return [(f"{stream.key}.{stream.last}", b"")]

    def _claim(self, stream_id: str, after: str | None) -> list[tuple[str, bytes]] | None:
        stream = self._streams.get(stream_id)
        if stream is None:
            return None if after is not None else []
        if self.clock() - stream.touched > self.ttl:
            self._drop(stream)
            return None if after is not None else []
        start = stream.done
        if after is not None:
            key, _, number = after.rpartition(".")
            oldest = stream.events[0][0] if stream.events else stream.last + 1
            if key != stream.key or not (number.isascii() and number.isdigit()) or len(number) > 18:
                return None
            start = int(number)
            if not oldest - 1 <= start <= stream.last:
                return None
        stream.done = max(stream.done, stream.last)
        return [(f"{stream.key}.{seq}", frame) for seq, frame in stream.events if seq > start]

    def _forget_idle(self, now: float) -> None:
        deadline = now - self.ttl
        while self._streams:
            oldest = next(iter(self._streams.values()))
            if oldest.touched >= deadline:
                return
            self._drop(oldest)

    def _drop(self, stream: _Stream) -> None:
        self._total -= len(stream.events)
        self._streams.pop(stream.id, None)
        self._by_key.pop(stream.key, None)
