"""A worker's own copy of the session records it served, kept coherent over pub/sub, so
that a request in an existing session needs no Redis round trip.

Every write of a record (create, save) gets a version from one counter in Redis and,
in the same Lua script, publishes `c <version> <id>` on the sessions channel; a delete,
an expiry a script notices and an eviction publish `d <id>`. Each worker receives them
on its bus subscription (`RedisBus.watch`) and drops an entry older than the news; it
acknowledges a `d` (`a <nonce> <id>`), and the worker that removed the session answers
only once no other worker may still answer it (`_removals`).

Why a stale entry cannot survive:
- A read that raced with a write (its reply arrives after the write's message) is not
  kept: each id with a round trip in flight remembers the newest version announced
  meanwhile, and a reply older than that is returned but not cached.
- Entries are kept only while the subscription is confirmed. When it is lost, the cache
  is emptied (what was published meanwhile is unknown), and replies to round trips
  begun before the (re)confirmation are not cached.
- A connection can also hang without failing. So the worker publishes a heartbeat of
  its own (`h <nonce> <sent>`) a few times per staleness bound, and answers from the
  cache only while one sent less than `stale_after` seconds ago has come back: Redis
  delivers one subscriber's messages in order, so every change it applied before that
  heartbeat has arrived. A change made on another worker is seen here at most
  `stale_after` seconds later, normally within a millisecond; a removal is seen here
  before the worker that made it answers (`_removals`).
- Under a Cluster whose sessions spread over the masters, each master publishes the
  news of its own sessions, and forwards it to the subscriber's node in order, on a
  link of its own. So a heartbeat goes through every master (`h <nonce> <sent>
  <node>`), and the cache is fresh only while each master's came back in time. When
  the masters change (a failover), the cache empties (`expect`): the master that went
  away may have died with news not yet forwarded.

Uses served from the cache are written back later, in batches (`dirty`): see
`RedisSessionStore` for the idle-timeout arithmetic.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Callable

from mcpgen.stores.redis._removals import Removal

__all__ = ["DELETED", "SessionCache", "Ticket"]

DELETED = sys.maxsize  # the version a deleted record is announced with

Ticket = tuple[int, list[int]]  # (epoch at the start, the id's flight: [ops, newest news])


class _Entry:
    __slots__ = ("data", "touched", "version")

    def __init__(self, data: bytes, version: int, touched: float) -> None:
        self.data = data  # the msgpack-encoded SessionState
        self.version = version
        self.touched = touched  # (store clock) the last use Redis is known to hold


class SessionCache:
    """The records one worker holds, and what it knows about their freshness. It is a
    `Watcher` of the sessions channel; it does no I/O itself."""

    def __init__(
        self,
        *,
        stale_after: float,
        max_entries: int,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stale_after = stale_after
        self.max_entries = max_entries
        self.monotonic = monotonic
        self.entries: dict[str, _Entry] = {}
        self.dirty: dict[str, float] = {}  # id -> last use served from here, not yet written
        self.fresh_until = 0.0  # (monotonic) answer from the cache only before this
        self.nodes: frozenset[str] = frozenset({""})  # the masters a heartbeat must cross
        self._beats: dict[str, float] = {}  # node -> (monotonic) fresh until, by its beat
        self.live = False  # the subscription is confirmed
        self.epoch = 0  # changes whenever the subscription is confirmed or lost
        self.last_hit = 0.0  # (monotonic) the heartbeat stops when nobody uses the cache
        self.nonce = secrets.token_hex(8).encode()
        self._flights: dict[str, list[int]] = {}
        self.peers: dict[bytes, float] = {}  # other workers -> (monotonic) their last beat here
        self.since = float("inf")  # (monotonic) hearing every beat since: `peers` is complete
        self.removals: dict[str, list[Removal]] = {}  # this worker waits on (`_removals`)
        self.acknowledge: Callable[[str], None] = lambda session_id: None  # publish `a`

    def hit(self, session_id: str, now: float, within: float) -> bytes | None:
        """The record if it may be answered from here: cached, the heartbeat fresh, and
        the use Redis holds for it at most `within` seconds old (store clock `now`).
        A hit is a use, written back later."""
        entry = self.entries.get(session_id)
        if entry is None:
            return None
        mono = self.monotonic()
        if mono >= self.fresh_until or now - entry.touched > within:
            return None
        self.dirty[session_id] = now
        self.last_hit = mono
        return entry.data

    # -- round trips ----------------------------------------------------------------------
    def begin(self, session_id: str) -> Ticket:
        flight = self._flights.get(session_id)
        if flight is None:
            flight = self._flights[session_id] = [0, 0]
        flight[0] += 1
        return (self.epoch if self.live else -1), flight

    def end(
        self,
        session_id: str,
        ticket: Ticket,
        version: int | None = None,
        data: bytes = b"",
        touched: float = 0.0,
    ) -> None:
        """A round trip is over: keep what it returned (`version`, `data`) unless news
        of a newer version came meanwhile or the subscription changed. None: it failed
        or found nothing; `DELETED`: it deleted the record."""
        epoch, flight = ticket
        flight[0] -= 1
        if flight[0] == 0 and self._flights.get(session_id) is flight:
            del self._flights[session_id]
        if version is None:
            return
        if version == DELETED:
            flight[1] = DELETED  # a concurrent read that saw the record must not keep it
            self.forget(session_id)
            return
        if epoch < 0 or epoch != self.epoch or version < flight[1]:
            return
        entry = self.entries.get(session_id)
        if entry is not None:
            if entry.version > version:
                return
        elif len(self.entries) >= self.max_entries:
            del self.entries[next(iter(self.entries))]  # the oldest entry
        self.entries[session_id] = _Entry(data, version, touched)
        self.last_hit = self.monotonic()

    def forget(self, session_id: str) -> None:
        self.entries.pop(session_id, None)
        self.dirty.pop(session_id, None)

    def take_dirty(self) -> dict[str, float]:
        dirty, self.dirty = self.dirty, {}
        return dirty

    def restore(self, uses: dict[str, float]) -> None:
        """Uses a failed write did not record: keep them for the next one."""
        for session_id, used in uses.items():
            if used > self.dirty.get(session_id, 0.0):
                self.dirty[session_id] = used

    def written(self, uses: dict[str, float], gone: list[str]) -> None:
        """A batch of uses reached Redis; the records in `gone` were not there."""
        for session_id in gone:
            self.forget(session_id)
        for session_id, used in uses.items():
            entry = self.entries.get(session_id)
            if entry is not None and used > entry.touched:
                entry.touched = used

    def heartbeat(self, node: str = "") -> bytes:
        """A heartbeat to publish (through `node`, one of `nodes`)."""
        beat = b"h %s %r" % (self.nonce, self.monotonic())
        return beat + b" " + node.encode() if node else beat

    def expect(self, nodes: frozenset[str]) -> None:
        """The masters the news may come from now (under a Cluster: every master, each
        forwarding what it publishes in order). Fresh only once a heartbeat sent
        through each came back; when they change (a failover), what a master that
        went away published last may never have arrived: the cache empties."""
        if nodes == self.nodes:
            return
        self.nodes = nodes
        self.since = max(self.since, self.monotonic())  # (news from a new master)
        self.reset()

    def reset(self) -> None:
        """Forget every record and every heartbeat (news may have been missed); round
        trips under way keep nothing they return."""
        self.epoch += 1
        self.entries.clear()
        self._beats.clear()
        self.fresh_until = 0.0

    # -- removals this worker answers only once no other worker serves them (`_removals`) -----
    def expect_removal(self, session_ids: list[str]) -> list[Removal]:
        """Before removing `session_ids`: what to wait for before answering."""
        waits = []
        for session_id in session_ids:
            removal = Removal()
            self.removals.setdefault(session_id, []).append(removal)
            waits.append(removal)
        return waits

    def settled(self, session_ids: list[str], waits: list[Removal]) -> None:
        for session_id, removal in zip(session_ids, waits, strict=True):
            held = self.removals.get(session_id, [])
            if removal in held:
                held.remove(removal)
            if not held:
                self.removals.pop(session_id, None)

    def _removed(self, session_id: str) -> None:
        """The news of a removal: acknowledge it (the record is dropped here), and
        tell this worker's own waits."""
        waits = self.removals.get(session_id)
        if not waits:
            if self.live:
                self.acknowledge(session_id)
        else:  # (removed here: nobody waits for this worker, unless removed twice at once)
            mono = self.monotonic()
            self.peers = {p: t for p, t in self.peers.items() if t + self.stale_after > mono}
            if self.since + self.stale_after <= mono:  # (else a beat may have come before)
                for removal in waits:
                    removal.heard(self.peers, self.stale_after)

    # -- the Watcher side -----------------------------------------------------------------
    def message(self, data: bytes) -> None:
        kind, _, rest = data.partition(b" ")
        if kind == b"h":
            nonce, _, sent = rest.partition(b" ")
            sent, _, node = sent.partition(b" ")
            if nonce == self.nonce:
                name = node.decode()
                fresh = float(sent) + self.stale_after
                self._beats[name] = max(self._beats.get(name, 0.0), fresh)
                self.fresh_until = min(self._beats.get(n, 0.0) for n in self.nodes)
            else:
                self.peers[nonce] = self.monotonic()
            return
        if kind == b"a":
            nonce, _, raw = rest.partition(b" ")
            if nonce != self.nonce:
                for removal in self.removals.get(raw.decode(), ()):
                    removal.ack(nonce)
            return
        if kind == b"c":
            number, _, raw = rest.partition(b" ")
            version = int(number)
        elif kind == b"d":
            raw, version = rest, DELETED
        else:
            return
        session_id = raw.decode()
        entry = self.entries.get(session_id)
        if entry is not None and entry.version < version:
            del self.entries[session_id]  # (its uses not yet written still count)
        flight = self._flights.get(session_id)
        if flight is not None and flight[1] < version:
            flight[1] = version
        if version == DELETED:
            self.dirty.pop(session_id, None)
            self._removed(session_id)

    def subscribed(self, live: bool) -> None:
        self.live = live
        self.since = self.monotonic() if live else float("inf")
        self.reset()
