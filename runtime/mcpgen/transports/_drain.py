"""A worker's drain: how an HTTP app stops without dropping what a client can keep.

`McpAsgiApp.shutdown` drains in three steps. First, at once, what would otherwise hold
the worker for nothing: every listen stream gets its final result (the client opens it
again, on another worker), every legacy GET stream ends (the client reconnects with
`Last-Event-ID` and another worker replays the missed events from the shared event
log), every 2024-11-05 SSE stream ends. Then in-flight requests and the tasks running
here get up to the drain time (`HttpOptions.shutdown_grace_seconds`) to finish; `busy`
(from the server: its open connections) says when requests are still being answered.
Last, a request still waiting for its reply (its work running, or a legacy one waiting
for the client's answer to an input request) gets a 503 error with its id, a task still
running is cancelled with a status message that says why, and its
record is written before the process goes, so that nobody polls a task that stays
`working` for ever. A task is a coroutine of this process: it cannot move to another
worker, so cancelling it truthfully is the clean end (docs/guide/deployment.md).

Under `uvicorn_server` the listening socket is closed before the drain begins, so a
client that reconnects reaches another worker, never this one. An app mounted in
another ASGI router can still be handed requests once its drain is over: each request
then gets a 503 error with its id (`closed_reply`), before any session, task or store
is touched, and a body with no request in it a bare 202.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mcpgen import _jsonrpc as rpc
from mcpgen._server import ServerCore
from mcpgen.transports._asgi import ResponseStream
from mcpgen.transports._keepalive import end_streams
from mcpgen.transports._port import ServerPort

if TYPE_CHECKING:
    from mcpgen._server._running import RunningTask
    from mcpgen._server._task_runner import TaskRunner
    from mcpgen.transports._live import LiveSessions

__all__ = [
    "CANCELLED_MESSAGE",
    "Draining",
    "closed_reply",
    "drain",
    "stopped_reply",
    "unanswered",
]

log = logging.getLogger("mcpgen.server")
CANCELLED_MESSAGE = (
    "cancelled: the worker running it stopped before it finished "
    "(drain time {seconds:g} s); run it again"
)
_INTERNAL_ERROR = -32603
_POLL = 0.02
_members = msgspec.json.Decoder(list[msgspec.Raw]).decode
_WRITE_SECONDS = 5.0  # at most, for the cancelled tasks' records


class _Sessions(Protocol):
    @property
    def live(self) -> LiveSessions: ...


class _LegacySse(Protocol):
    def close(self) -> None: ...


class _Grace(Protocol):
    @property
    def shutdown_grace_seconds(self) -> float: ...


class Stopping(Protocol):
    """An app that may be draining."""

    @property
    def stopping(self) -> bool: ...
    @property
    def options(self) -> _Grace: ...


class Draining(Protocol):
    """What the drain reads of an app (an `McpAsgiApp`)."""

    @property
    def server(self) -> ServerPort: ...
    @property
    def legacy_sessions(self) -> _Sessions: ...
    @property
    def legacy_sse(self) -> _LegacySse | None: ...
    @property
    def streams(self) -> set[Any]: ...


def _core(server: ServerPort) -> ServerCore | None:
    """The server's core when it has one (a `Server` does), else None."""
    core = getattr(server, "core", None)
    return core if isinstance(core, ServerCore) else None


def _runner(server: ServerPort) -> TaskRunner | None:
    core = _core(server)
    return None if core is None else core.tasks


def end_open_streams(app: Draining) -> None:
    """The first step: listen, legacy GET and 2024-11-05 SSE streams end now."""
    core = _core(app.server)
    if core is not None:
        core.close_listeners()
    for live in app.legacy_sessions.live.held():
        end_streams(live)
    if app.legacy_sse is not None:
        app.legacy_sse.close()


async def drain(app: Draining, seconds: float, busy: Callable[[], bool] | None) -> None:
    """The whole drain (see the module docstring); returns once the work is done or
    `seconds` have passed, with every task of this worker in a final state."""
    end_open_streams(app)
    runner = _runner(app.server)
    seen: dict[str, RunningTask] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        running = runner.running if runner is not None else {}
        seen.update(running)
        streams = any(not s.closed for s in app.streams)
        if not running and not streams and not (busy is not None and busy()):
            break
        await asyncio.sleep(_POLL)
    else:  # the drain time ran out: a request still waiting for its reply gets this one
        for stream in list(app.streams):
            if not stream.closed and stream.final is None and stream.body:
                stream.reply(stopped_reply(stream.body, seconds))
    if runner is None:
        return
    stopped = runner.close(CANCELLED_MESSAGE.format(seconds=seconds))
    if stopped:
        log.warning("%d task(s) cancelled: the drain time (%g s) ran out", len(stopped), seconds)
    await _written(runner, [*seen.values(), *stopped], loop.time() + _WRITE_SECONDS)


async def _written(runner: TaskRunner, tasks: list[RunningTask], deadline: float) -> None:
    """Wait until each record holds its task's final state (a write under way is
    awaited, then the state written once more)."""
    loop = asyncio.get_running_loop()
    for live in {id(t): t for t in tasks}.values():
        while live.writing and loop.time() < deadline:
            await asyncio.sleep(_POLL)
        try:
            await asyncio.wait_for(runner.write(live), max(0.1, deadline - loop.time()))
        except Exception as exc:  # a store that is down: the record's ttl ends it
            log.warning("task %s: its final state not written: %s", live.state.id[:8], exc)


def unanswered(app: Stopping, channel: ResponseStream, task: asyncio.Future[Any] | None) -> bool:
    """Work a drain cancelled gets an error reply (True when it was given one now)."""
    if not (app.stopping and task is not None and task.cancelled() and channel.final is None):
        return False
    channel.reply(stopped_reply(channel.body, app.options.shutdown_grace_seconds))
    return True


def stopped_reply(body: bytes | None, seconds: float) -> rpc.ErrorFrame:
    """The reply to a request whose work the drain cancelled when its time ran out: an
    error with the request's id, status 503 (the worker is going away). A batch gets an
    array of such errors, one per request in it (its notifications have no answer)."""
    message = f"the worker stopped before it answered (drain time {seconds:g} s ran out)"
    return _unserved(body, message)


def closed_reply(body: bytes) -> rpc.ErrorFrame | None:
    """The reply to what reaches an app whose shutdown is over (a mounted app can still
    be routed requests): the same 503 errors with the ids, None (nothing to answer:
    202) for a body that holds no request, only notifications or a client's answers."""
    if _answerless(body):
        return None
    return _unserved(body, "the worker has stopped; send the request to another one")


def _answerless(body: bytes) -> bool:
    """Whether `body` holds frames only, none of them a request."""
    try:
        raw = [bytes(m) for m in _members(body)] if rpc.is_batch(body) else [body]
        kinds = {rpc.classify(rpc.decode_frame(frame)) for frame in raw}
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return bool(kinds) and kinds <= {rpc.NOTIFICATION, rpc.RESPONSE, rpc.ERROR}


def _unserved(body: bytes | None, message: str) -> rpc.ErrorFrame:
    ids = _batch_ids(body) if body and rpc.is_batch(body) else None
    if not ids:
        request_id: Any = None
        if body:
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                request_id = rpc.readable_id(rpc.decode_frame(body))
        return rpc.error_frame(request_id, _INTERNAL_ERROR, message, status=503)
    frames = [rpc.error_frame(i, _INTERNAL_ERROR, message) for i in ids]
    joined = rpc.ErrorFrame(b"[" + b",".join(frames) + b"]")
    joined.code, joined.status = _INTERNAL_ERROR, 503
    return joined


def _batch_ids(body: bytes) -> list[Any]:
    """The ids of the requests of the batch `body`, read as the core reads them."""
    try:
        members = _members(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []
    ids = []
    for member in members:
        with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
            frame = rpc.decode_frame(bytes(member))
            if isinstance(frame.method, str) and rpc.valid_id(frame.id):
                ids.append(frame.id)
    return ids
