"""JSON-RPC batches: an array of messages in one frame, answered by one array.

Only the revisions in `mcpgen._protocol.JSON_RPC_BATCHES` take them (2025-03-26 added
batches, 2025-06-18 removed them again). Each member is received on its own; the
replies are joined in the order of the members, pending ones awaited first. Every
member is decoded and judged (`_authorize`) before any runs: when one is refused, the
batch is refused whole and none runs.
"""

from __future__ import annotations

from typing import Protocol

import msgspec
from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen import _protocol as proto
from mcpgen._server._authorize import judge
from mcpgen._server._call import Call, Channel, Outcome, Pending, Settled
from mcpgen._server._core import ServerCore

__all__ = ["receive_batch"]

_members = msgspec.json.Decoder(list[msgspec.Raw])
_BAD = proto.STATUS_BAD_REQUEST


class _Members(Protocol):
    """What a batch needs of its session (a `Session`)."""

    core: ServerCore

    @property
    def legacy_version(self) -> str | None: ...

    def take(self, line: bytes, channel: Channel) -> Outcome | Call: ...

    def run(self, call: Call) -> Outcome: ...


def receive_batch(line: bytes, session: _Members, channel: Channel) -> Outcome:
    """The outcome of the batch `line` in `session` (batches need a handshake of a
    revision that has them)."""
    if session.legacy_version not in proto.JSON_RPC_BATCHES:
        allowed = ", ".join(sorted(proto.JSON_RPC_BATCHES))
        message = f"JSON-RPC batches are only accepted in a {allowed} session"
        return rpc.error_frame(UNSET, rpc.INVALID_REQUEST, message, status=_BAD)
    try:
        items = _members.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        return rpc.error_frame(UNSET, rpc.PARSE_ERROR, f"parse error: {exc}", status=_BAD)
    if not items:
        return rpc.error_frame(UNSET, rpc.INVALID_REQUEST, "empty batch", status=_BAD)
    taken: list[Outcome | Call] = []
    for item in items:
        raw = bytes(item)
        taken.append(
            rpc.error_frame(UNSET, rpc.INVALID_REQUEST, "nested batch")
            if rpc.is_batch(raw)
            else session.take(raw, channel)
        )
    refused = judge(session.core, [x for x in taken if type(x) is Call])
    if refused is not None:
        return refused
    outcomes: list[Outcome] = [session.run(x) if isinstance(x, Call) else x for x in taken]
    if any(isinstance(o, Pending) for o in outcomes):
        return Pending(None, _gather(outcomes))
    return _join(outcomes)


async def _gather(outcomes: list[Outcome]) -> Outcome:
    done: list[Settled] = []
    try:
        for outcome in outcomes:
            o = outcome
            while isinstance(o, Pending):
                o = await o.coro
            done.append(o)
    finally:  # cancelled (a drain, a client gone): the members not started never run
        for later in outcomes[len(done) + 1 :]:
            if isinstance(later, Pending):
                later.close()
    return _join(done)


def _join(outcomes: list[Outcome] | list[Settled]) -> bytes | None:
    # One array of the replies; DEFERRED members (listen) have no place in it.
    frames = [bytes(o) for o in outcomes if isinstance(o, bytes)]
    return b"[" + b",".join(frames) + b"]" if frames else None
