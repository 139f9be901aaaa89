"""The bus on Redis pub/sub: every worker's subscribers see every worker's events.

`publish` never blocks and may be called from any thread (a sync handler runs in a
worker thread): it queues the msgpack-encoded event, and one writer task per
bus sends the queue in order (so one publisher's events arrive in publish order).
The writer waits for the subscription to be confirmed before its first send, so a
worker sees its own events too, as with the in-memory bus. One reader task per bus
receives from the channel `<prefix>bus` and calls the subscribers in arrival order.

Both tasks start on first use in a running event loop. When Redis goes away the
reader resubscribes once it is back; events published meanwhile are sent when the
writer gets through again (bounded: past `max_queue` the oldest are dropped and
logged), and events other workers sent during the outage are lost, as pub/sub loses
them: a listen stream may miss a list_changed, which a client recovers from by
listing again.

A store may `watch` a channel of its own on the same subscription (the session store's
cache invalidations): it gets that channel's raw messages, and is told when the
subscription is confirmed and when it is lost (whatever was published meanwhile is
missed).

Each message carries 8 random bytes before the event, the same on every worker that
receives it: while the subscribers of an event run, `dispatching` holds them, so that
the same event seen by several workers can be told apart from an equal later one (a
legacy session's standalone stream appends each event once, `transports/_standalone`).
Before those, the message's number in the order Redis published it (one counter,
`<prefix>bus-seq`, incremented by the same script that publishes): `sequence` holds it
while the subscribers run. Every worker receives the messages in that order.

Each bus also subscribes, in the same command, to a channel of its own
(`<prefix>w:<worker>`, on which nothing is published): while it has subscribers, Redis
holds this worker's subscription, and so its bus channel, open. A Lua script asks
`PUBSUB NUMSUB` whether a worker is still listening; a killed worker stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
from redis import exceptions as rex

from mcpgen.stores._interfaces import BusEvent, Unsubscribe
from mcpgen.stores.redis._base import BUS, SEQUENCE, Connection

__all__ = ["RedisBus", "Watcher"]

log = logging.getLogger("mcpgen.stores")
Callback = Callable[[BusEvent], None]
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder(BusEvent).decode
_FAILURES = (rex.ConnectionError, rex.TimeoutError, OSError, TimeoutError)
_RETRIED = (*_FAILURES, rex.RedisClusterException, rex.ClusterError, rex.TryAgainError)
# KEYS: the counter; ARGV: the channel, the message, PUBLISH or SPUBLISH (sharded: the
# channel is in the counter's slot)
_PUBLISH = """
local n = redis.call('INCR', KEYS[1])
return redis.call(ARGV[3], ARGV[1], n .. ':' .. ARGV[2])
"""


class Watcher(Protocol):
    """Receives one channel's raw messages on the bus's subscription (`RedisBus.watch`)."""

    def message(self, data: bytes) -> None: ...

    def subscribed(self, live: bool) -> None:
        """True: every message published from now on arrives; False: the subscription
        is lost, and messages published until the next True are missed."""
        ...


class RedisBus:
    """A `Bus` shared by every worker connected to the same Redis and prefix."""

    def __init__(self, connection: Connection, *, max_queue: int = 10_000) -> None:
        self.connection = connection
        self.channel = connection.under(BUS) + "bus"
        self.max_queue = max_queue
        self._callbacks: list[Callback] = []
        self._queue: deque[bytes] = deque()
        self._wake: asyncio.Event | None = None
        self._subscribed: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._watchers: dict[bytes, Watcher] = {}
        self.dispatching: bytes | None = None  # the id of the event being handed out
        self.sequence = 0  # its number in publish order (`<prefix>bus-seq`)
        self.worker = os.urandom(12).hex()  # this bus's name among the workers
        self.worker_channel = f"{connection.under(BUS)}w:{self.worker}"
        # Under a spread Cluster the bus's channels are sharded (SSUBSCRIBE, SPUBLISH):
        # served by the master of the bus's slot (and its replicas) only, not forwarded
        # to every node; elsewhere ordinary pub/sub, as before.
        self.sharded = connection.spread

    def publish(self, event: BusEvent) -> None:
        if len(self._queue) >= self.max_queue:
            self._queue.popleft()
            log.warning("bus queue full: dropped the oldest unsent event")
        self._queue.append(os.urandom(8) + _encode(event))  # (a deque: thread-safe)
        loop = self._loop
        if loop is None:
            self._start()
            if self._wake is not None:
                self._wake.set()
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            assert self._wake is not None
            self._wake.set()
        else:  # a sync handler in a worker thread: wake the writer on its own loop
            loop.call_soon_threadsafe(self._wake_writer)

    def subscribe(self, callback: Callback) -> Unsubscribe:
        self._callbacks.append(callback)
        self._start()

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def watch(self, channel: str, watcher: Watcher) -> None:
        """Hand `channel`'s messages to `watcher` (before the bus starts)."""
        if self._tasks:
            raise RuntimeError("watch a channel before the bus starts")
        self._watchers[channel.encode()] = watcher

    def start(self) -> None:
        """Start receiving (in the running event loop), if not started yet."""
        self._start()

    async def ready(self) -> None:
        """Wait until the subscription is confirmed (events from now on arrive here)."""
        self._start()
        assert self._subscribed is not None
        await self._subscribed.wait()

    def _start(self) -> None:
        if self._tasks:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # built outside a loop: starts with the first publish in one
        self._loop = loop
        self._wake, self._subscribed = asyncio.Event(), asyncio.Event()
        self._tasks = [loop.create_task(self._read()), loop.create_task(self._write())]

    def _wake_writer(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _write(self) -> None:
        assert self._wake is not None
        assert self._subscribed is not None
        client = self.connection.client
        publish = client.register_script(_PUBLISH)
        keys = [self.connection.under(BUS) + SEQUENCE]
        while True:
            await self._subscribed.wait()
            while self._queue:
                try:
                    verb = "SPUBLISH" if self.sharded else "PUBLISH"
                    await publish(keys=keys, args=[self.channel, self._queue[0], verb])
                except _RETRIED as exc:  # (a cluster between masters too)
                    log.warning("bus publish failed (retrying): %s", exc)
                    await asyncio.sleep(0.5)
                    continue
                except rex.ResponseError as exc:  # (out of memory, say): not to be retried
                    log.warning("bus publish refused, event dropped: %s", exc)
                self._queue.popleft()
            self._wake.clear()
            await self._wake.wait()

    async def _read(self) -> None:
        assert self._subscribed is not None
        own = self.worker_channel.encode()
        while True:
            client: Any = None
            pubsub: Any = None
            try:
                client = await self.connection.subscriber(self.channel)
                pubsub = client.pubsub()
                if self.sharded:
                    await pubsub.ssubscribe(self.channel, self.worker_channel)
                    if self._watchers:
                        await pubsub.subscribe(*self._watchers)
                else:
                    await pubsub.subscribe(self.channel, self.worker_channel, *self._watchers)
                await self._confirmed(pubsub)
                self._subscribed.set()
                for watcher in self._watchers.values():
                    watcher.subscribed(True)
                async for message in pubsub.listen():
                    if message.get("type") == "sunsubscribe":  # the slot moved away
                        raise rex.ConnectionError("the bus's slot moved to another node")
                    if message.get("type") not in ("message", "smessage"):
                        continue
                    channel = message["channel"]
                    watched = self._watchers.get(channel)
                    if watched is None and channel == own:
                        continue  # (nothing is published there)
                    if watched is None:
                        self._dispatch(message["data"])
                    else:
                        watched.message(message["data"])
            except (*_RETRIED, rex.ResponseError) as exc:  # (refused: an ACL, say) retried too
                self._lost()  # at once: a watcher must not trust what it holds meanwhile
                log.warning("bus subscription lost (resubscribing): %s", exc)
                await asyncio.sleep(0.5)
            finally:
                self._lost()
                with contextlib.suppress(Exception):
                    if pubsub is not None:
                        await pubsub.aclose()
                    if client is not None:
                        await client.aclose()

    def _lost(self) -> None:
        for watcher in self._watchers.values():
            watcher.subscribed(False)

    async def _confirmed(self, pubsub: Any) -> None:
        """Wait for Redis to confirm every channel: from then on, what anyone publishes
        reaches us (a watcher relies on it)."""
        pending = {self.channel.encode(), self.worker_channel.encode(), *self._watchers}
        while pending:
            message = await pubsub.get_message(timeout=self.connection.timeout)
            if message is None:
                raise TimeoutError("no subscription confirmation")
            if message.get("type") in ("subscribe", "ssubscribe"):
                pending.discard(message["channel"])

    def _dispatch(self, data: bytes) -> None:
        number, _, data = data.partition(b":")
        try:
            sequence = int(number)
            event = _decode(data[8:])
        except (ValueError, msgspec.DecodeError):
            log.warning("undecodable bus event dropped")
            return
        self.dispatching, self.sequence = data[:8], sequence
        try:
            for callback in tuple(self._callbacks):
                try:
                    callback(event)
                except Exception:  # one subscriber's bug must not stop the others
                    log.exception("bus subscriber failed")
        finally:
            self.dispatching = None

    async def aclose(self) -> None:
        tasks, self._tasks = self._tasks, []
        self._loop = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
