"""One request in flight, the channel its frames go to, and what a frame comes to.

The seam between the sans-I/O core and every transport is here. `Session.receive`
returns an `Outcome`:

  bytes     the reply to write now;
  None      nothing to write (a notification, a response, a cancelled request);
  DEFERRED  the request stays open; its reply comes later through `Channel.reply`
            (a listen stream, or a legacy request waiting for the client's answers);
  Pending   async work whose own outcome comes later.

A transport carries an outcome out with `deliver(outcome, channel)`: it writes a reply
through `channel.reply`, or starts pending work with `channel.spawn` and ties the
request's cancellation to it. A transport therefore implements one small interface,
`Channel`, and decides nothing else about what the core returned.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from mcpgen._protocol import LOG_LEVELS
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen.auth._tokens import AccessToken

__all__ = [
    "DEFERRED",
    "Call",
    "Channel",
    "Deferred",
    "Handle",
    "Outcome",
    "Pending",
    "RequestId",
    "RequestInfo",
    "Settled",
    "deliver",
    "settle",
]

RequestId: TypeAlias = str | int
_encode = msgspec.json.Encoder().encode


class Deferred(enum.Enum):
    """The type of `DEFERRED` (a one-member enum, so type checkers narrow on `is`)."""

    DEFERRED = "DEFERRED"

    def __repr__(self) -> str:
        return "DEFERRED"


# The request stays open: its reply comes later through `Channel.reply`.
DEFERRED: Final = Deferred.DEFERRED
"""The outcome of a request whose reply comes later, through `Channel.reply`."""


class RequestInfo(msgspec.Struct, frozen=True, kw_only=True):
    """The HTTP request that carried an MCP request (`ctx.request`): None on stdio and
    in memory. `headers` are every request header by lower-case name except
    `authorization` (the verified token is `ctx.auth`); `client` is the peer's
    (host, port) when the ASGI server reports it; `transport` is "streamable-http" or
    "sse" (the deprecated HTTP+SSE transport)."""

    transport: str
    method: str
    path: str
    query: str = ""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    client: tuple[str, int] | None = None


class OwnReader(Protocol):
    """How a handler reads its own server's resources (the core, for `ctx.read_resource`)."""

    def read_own(self, call: Call, uri: str) -> Any: ...


class Handle(Protocol):
    """Running async work, as `Channel.spawn` returns it (an `asyncio.Task` will do)."""

    def cancel(self, msg: Any | None = None) -> bool: ...

    def cancelled(self) -> bool: ...

    def add_done_callback(self, fn: Callable[[Handle], object], /) -> None: ...


class Channel(abc.ABC):
    """Where the frames of one request (or one session) go; a transport subclasses it.

    `notify` carries notifications tied to the request (progress, log, listen events),
    `request` carries legacy server-to-client requests, `reply` carries the request's
    reply: `deliver` writes an immediate one there, and the core one produced later
    (legacy input requests answered, listen streams closed by the server). `request`
    and `reply` default to `notify`, which is all an ordered byte stream needs.
    `spawn` starts async work and returns its handle (for cancellation). `headers`
    holds the request's MCP HTTP headers (lower-case names), or None outside HTTP;
    `principal` names who the transport authenticated, `auth` is the verified bearer
    token it authenticated with (HTTP with `auth=` configured; None elsewhere); `peer`
    is the client's network address where the transport has one (HTTP), which
    anonymous clients' quotas count against. `request_info()` and `session_id()`
    describe the carrying HTTP request and the legacy session, where the transport has
    them (`ctx.request`, `ctx.session_id`).
    """

    headers: dict[str, str] | None = None
    principal: str | None = None
    auth: AccessToken | None = None
    peer: str | None = None

    def request_info(self) -> RequestInfo | None:
        """The HTTP request this channel answers, if any (built on demand)."""
        return None

    def session_id(self) -> str | None:
        """The transport's id of the legacy session this channel serves, if any."""
        return None

    @abc.abstractmethod
    def notify(self, frame: bytes) -> None:
        """Write one frame to the peer (every transport does it its own way)."""

    def request(self, frame: bytes) -> bool | None:
        """A legacy server-to-client request (by default sent as `notify` sends).
        False: the transport has no open way to the client for it (nothing was sent),
        so whoever awaits its answer fails at once instead of waiting."""
        self.notify(frame)
        return None

    def reply(self, frame: bytes) -> None:
        """The request's reply (by default sent as `notify` sends)."""
        self.notify(frame)

    @abc.abstractmethod
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> Handle:
        """Run async work detached from the caller (a pending outcome, a legacy request
        completed by a client's answer); the transport owns the event loop."""


class RunningTask(Protocol):
    """What a call knows of the task it runs as (the Tasks extension's record)."""

    @property
    def id(self) -> str: ...

    def note_progress(self, progress: float, total: float | None, message: str | None) -> None: ...


class Asker(Protocol):
    """How a legacy session sends a server-to-client request for a call and awaits the
    client's answer (`await ctx.elicit(...)` and the like; see `_awaits`)."""

    def request(self, call: Call, request: Any, timeout: float | None) -> Awaitable[Any]: ...


class Call:
    """One request being served: who asked, in which era and revision, and where its
    notifications go."""

    __slots__ = (
        "asker",
        "auth",
        "cancel_hook",
        "cancelled",
        "caps",
        "channel",
        "core",
        "detachable",
        "era",
        "info",
        "input_responses",
        "last_progress",
        "lifespan",
        "log_rank",
        "meta",
        "method",
        "origin",
        "params",
        "principal",
        "progress_token",
        "request_id",
        "rounds",
        "spec",
        "state",
        "task",
        "version",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        era: str,
        version: str,
        meta: dict[str, Any],
        caps: dict[str, Any],
        channel: Channel,
        log_rank: int | None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.era = era
        self.version = version
        self.meta = meta
        self.caps = caps
        self.channel = channel
        self.principal = channel.principal
        self.auth = channel.auth
        self.log_rank = log_rank
        self.progress_token: Any = meta.get("progressToken")
        self.info: dict[str, Any] | UnsetType = UNSET  # a legacy session's clientInfo
        self.input_responses: dict[str, Any] = {}
        self.state: Any = None  # the handler's own, between input rounds
        self.rounds = 0  # input rounds so far (legacy sessions)
        self.cancelled = False
        self.cancel_hook: Callable[[], object] | None = None
        self.last_progress: float | None = None
        self.task: RunningTask | None = None  # the task this call runs as, if any
        self.detachable = False  # may still turn into a task (`await ctx.detach()`)
        self.asker: Asker | None = None  # a legacy session's, for awaited input requests
        self.lifespan: Any = None  # the server's lifespan value, set for handlers with a Context
        self.origin = channel  # the request's own channel, kept when a task replaces `channel`
        self.core: OwnReader | None = None  # set for handlers with a Context (read_resource)
        # The method's entry and the params decoded for its handler, once decoded: what
        # authorization judges is what is dispatched (`_authorize`).
        self.spec: Any = None
        self.params: Any = None  # (middleware reads them again)

    def capabilities(self) -> t.ClientCapabilities:
        return msgspec.convert(self.caps, t.ClientCapabilities)

    def client_info(self) -> t.Implementation | None:
        raw = (
            self.info
            if self.info is not UNSET
            else self.meta.get("io.modelcontextprotocol/clientInfo")
        )
        if not isinstance(raw, dict):
            return None
        try:
            return msgspec.convert(raw, t.Implementation)
        except msgspec.ValidationError:
            return None

    def cancel(self) -> None:
        self.cancelled = True
        if self.cancel_hook is not None:
            self.cancel_hook()

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.task is not None:  # no progress notifications for tasks: a status message
            self.task.note_progress(progress, total, message)
            return
        token = self.progress_token
        if token is None or self.cancelled or type(token) not in (str, int):
            return
        if self.last_progress is not None and progress <= self.last_progress:
            return  # progress must strictly increase
        self.last_progress = progress
        params = t.ProgressNotificationParams(
            progress_token=token,
            progress=progress,
            total=UNSET if total is None else total,
            message=UNSET if message is None else message,
        )
        self.channel.notify(_encode(t.ProgressNotification(params=params)))

    def log(self, level: str, data: Any, logger: str | None) -> None:
        rank = LOG_LEVELS.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r}; expected one of {list(LOG_LEVELS)}")
        if self.log_rank is None or rank < self.log_rank or self.cancelled:
            return
        params = t.LoggingMessageNotificationParams(
            level=level,  # type: ignore[arg-type]
            data=data,
            logger=UNSET if logger is None else logger,
        )
        self.channel.notify(_encode(t.LoggingMessageNotification(params=params)))


class Pending:
    """Async work whose outcome comes later: `coro` resolves to another outcome."""

    __slots__ = ("call", "coro", "inner")

    def __init__(
        self,
        call: Call | None,
        coro: Coroutine[Any, Any, Outcome],
        inner: Coroutine[Any, Any, Any] | None = None,
    ) -> None:
        self.call = call
        self.coro = coro
        self.inner = inner  # the handler's own coroutine, awaited by `coro`

    def bind(self, handle: Handle) -> None:
        """Cancelling the call cancels `handle`; work cancelled before it ever ran
        closes the coroutines it never awaited (no "never awaited" noise)."""
        if self.call is not None:
            self.call.cancel_hook = handle.cancel
        handle.add_done_callback(self._closed)

    def _closed(self, handle: Handle) -> None:
        if handle.cancelled():
            self.close()

    def close(self) -> None:
        """Close the coroutines of work that will never run."""
        self.coro.close()
        if self.inner is not None:
            self.inner.close()


# What `Session.receive` returns, and what pending work finally comes to.
Outcome: TypeAlias = bytes | Deferred | Pending | None
"""What `Session.receive` returns for one line: reply bytes to write, `DEFERRED`,
`Pending` work to run (hand it to `deliver`), or None when nothing is to be sent."""
Settled: TypeAlias = bytes | Deferred | None
"""What `Pending` work finally comes to: reply bytes, `DEFERRED`, or None."""


def deliver(outcome: Outcome, channel: Channel) -> Handle | None:
    """Carry out `outcome` on `channel`: a reply goes to `channel.reply`; pending work
    runs through `channel.spawn` (bound to the request's cancellation) and its own
    outcome is delivered when it ends. Returns the pending work's handle, whose result
    is the `Settled` outcome (HTTP waits on it to choose its response)."""
    if isinstance(outcome, bytes):
        channel.reply(outcome)
        return None
    if type(outcome) is Pending:
        handle = channel.spawn(settle(outcome, channel))
        outcome.bind(handle)
        return handle
    return None  # None or DEFERRED: nothing to write now


async def settle(outcome: Outcome, channel: Channel) -> Settled:
    """Await `outcome` to its end and write its reply, if any, to `channel.reply`."""
    while isinstance(outcome, Pending):
        outcome = await outcome.coro
    if isinstance(outcome, bytes):
        channel.reply(outcome)
    return outcome
