"""The sans-I/O client core: request building, correlation, era selection, MRTR.

Owns the client side of every protocol rule: `_meta` on modern requests, mirrored
HTTP headers, how a probe answer decides the era, the legacy handshake, typing of
results (older servers' results decoded into the newest revision's types), and the
input-required round trip as a pure state machine, and the client side of the Tasks
extension (declaring it, decoding task shapes, the state of waiting for a task).
Performs no I/O.
"""

from __future__ import annotations

from mcpgen._client._core import HTTP_STATUS_ONLY, ClientCore, Incoming, ProbeVerdict
from mcpgen._client._mrtr import Done, NeedInput, Retry, RoundTrip
from mcpgen._client._tasks import TaskCancelledError, TaskFailedError, TaskWatch, Wait

__all__ = [
    "HTTP_STATUS_ONLY",
    "ClientCore",
    "Done",
    "Incoming",
    "NeedInput",
    "ProbeVerdict",
    "Retry",
    "RoundTrip",
    "TaskCancelledError",
    "TaskFailedError",
    "TaskWatch",
    "Wait",
]
