"""The sans-I/O server core: registries, dispatch, MRTR, sessions for both eras.

Owns every protocol rule a server applies per message, on top of `mcpgen._protocol`
and `mcpgen._jsonrpc`. Performs no I/O and imports no I/O module: transports feed it
frames and carry out the `Outcome` it returns with `deliver` (see `_call`).
"""

from __future__ import annotations

from mcpgen._server._authorize import Refusal
from mcpgen._server._call import (
    DEFERRED,
    Call,
    Channel,
    Deferred,
    Handle,
    Outcome,
    Pending,
    RequestInfo,
    Settled,
    deliver,
    settle,
)
from mcpgen._server._core import CacheHint, Registry, ServerCore
from mcpgen._server._session import Session

__all__ = [
    "DEFERRED",
    "CacheHint",
    "Call",
    "Channel",
    "Deferred",
    "Handle",
    "Outcome",
    "Pending",
    "Refusal",
    "Registry",
    "RequestInfo",
    "ServerCore",
    "Session",
    "Settled",
    "deliver",
    "settle",
]
