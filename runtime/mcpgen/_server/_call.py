"""One request in flight: who asked, in which era, and where its notifications go."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen._protocol import LOG_LEVELS
from mcpgen_types import latest as t

__all__ = ["DEFERRED", "Call", "Channel", "Pending"]


class _Deferred:
    def __repr__(self) -> str:
        return "DEFERRED"


# The request stays open: its reply comes later through `Channel.reply`.
DEFERRED: Any = _Deferred()

_encode = msgspec.json.Encoder().encode


class Channel:
    """Where frames for one request (or one session) go; transports subclass it.

    `notify` carries notifications tied to the request (progress, log, listen events),
    `request` carries legacy server-to-client requests, `reply` carries a final reply
    produced later than the call that received the request (legacy input requests,
    listen streams closed by the server). `headers` holds the request's MCP HTTP
    headers (lower-case names), or None outside HTTP; `principal` names who the
    transport authenticated.
    """

    headers: dict[str, str] | None = None
    principal: str | None = None

    def notify(self, frame: bytes) -> None:
        raise NotImplementedError

    def request(self, frame: bytes) -> None:
        self.notify(frame)

    def reply(self, frame: bytes) -> None:
        self.notify(frame)

    def spawn(self, coro: Any) -> None:
        """Run detached async work (a legacy request completed by a client answer)."""
        raise NotImplementedError


class Call:
    __slots__ = (
        "cancel_hook",
        "cancelled",
        "caps",
        "channel",
        "detachable",
        "era",
        "info",
        "input_responses",
        "last_progress",
        "log_rank",
        "meta",
        "method",
        "principal",
        "progress_token",
        "request_id",
        "state",
        "task",
        "version",
    )

    def __init__(
        self,
        request_id: Any,
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
        self.log_rank = log_rank
        self.progress_token = meta.get("progressToken")
        self.info: Any = UNSET
        self.input_responses: dict[str, Any] = {}
        self.state: Any = None
        self.cancelled = False
        self.cancel_hook: Any = None
        self.last_progress: float | None = None
        self.task: Any = None  # the TaskRecord this call runs as (Tasks extension), if any
        self.detachable = False  # may still turn into a task (`await ctx.detach()`)

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
    """Async work for the transport to run: `task = create_task(p.coro); p.bind(task)`."""

    __slots__ = ("call", "coro", "inner")

    def __init__(
        self, call: Call | None, coro: Coroutine[Any, Any, Any], inner: Any = None
    ) -> None:
        self.call = call
        self.coro = coro
        self.inner = inner  # the handler's own coroutine, awaited by `coro`

    def bind(self, task: Any) -> None:
        """Cancelling the call cancels `task`; a task cancelled before it ever ran
        closes the coroutines it never awaited (no "never awaited" noise)."""
        if self.call is not None:
            self.call.cancel_hook = task.cancel
        task.add_done_callback(self._closed)

    def _closed(self, task: Any) -> None:
        if task.cancelled():
            self.coro.close()
            if self.inner is not None:
                self.inner.close()
