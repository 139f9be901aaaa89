"""The sans-I/O client core: request building, correlation, era selection, MRTR.

Owns the client side of every protocol rule: `_meta` on modern requests, mirrored
HTTP headers, how a probe answer decides the era (and the cache of such verdicts),
the legacy handshake, typing of results (older servers' results decoded into the
newest revision's types), which refused requests are sent once more, and the
input-required round trip as a pure state machine, and the client side of the Tasks
extension (declaring it, decoding task shapes, the state of waiting for a task).
Performs no I/O.

Inside, imports go one way: `_steps` and `_era` (leaves) <- `_tasks` <- `_core` <- `_mrtr`.
"""

from __future__ import annotations

from mcpgen._client._core import ClientCore, Incoming, RequestId, Sent
from mcpgen._client._era import (
    ProbeVerdict,
    Verdict,
    VerdictCache,
    initialize_refused,
    shared_verdicts,
)
from mcpgen._client._mrtr import RoundTrip
from mcpgen._client._steps import Done, NeedInput, Resend, Retry, Wait
from mcpgen._client._tasks import TaskCancelledError, TaskFailedError, TaskWatch

__all__ = [
    "ClientCore",
    "Done",
    "Incoming",
    "NeedInput",
    "ProbeVerdict",
    "RequestId",
    "Resend",
    "Retry",
    "RoundTrip",
    "Sent",
    "TaskCancelledError",
    "TaskFailedError",
    "TaskWatch",
    "Verdict",
    "VerdictCache",
    "Wait",
    "initialize_refused",
    "shared_verdicts",
]
