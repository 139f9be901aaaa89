"""Opt-in OpenTelemetry traces, metrics and log context (the `telemetry` extra).

`Server(..., telemetry=True)`, `Client(..., telemetry=True)` or `MCPGEN_OTEL=1` turn it
on. Nothing here imports `opentelemetry` until one of them asks for it: a server or
client built with telemetry off never loads it, and its hot path is untouched (the
server picks its session class, the client its exchange function, once, at
construction).

What is recorded follows the OpenTelemetry semantic conventions for MCP (spans named
`{mcp.method.name} {target}`, trace context in `params._meta`, the operation and
session duration histograms); `docs/guide/telemetry.md` lists every span and metric.
The application brings the OpenTelemetry SDK and its exporters: mcpgen uses the global
tracer and meter providers.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mcpgen._server import Session

if TYPE_CHECKING:
    from mcpgen.telemetry._calling import Connection

__all__ = ["ENV", "enabled", "instrument_client", "session_class"]

ENV = "MCPGEN_OTEL"
"""The environment variable that turns telemetry on for every server and client of the
process when set to "1" (an explicit `telemetry=` argument wins over it)."""


def enabled(flag: bool | None) -> bool:
    """Whether telemetry is on: the constructor's `telemetry=` when given, else
    `MCPGEN_OTEL=1`."""
    if flag is not None:
        return flag
    return os.environ.get(ENV, "") == "1"


def session_class(flag: bool | None) -> type[Session]:
    """The class a server builds its sessions from: `Session`, or with telemetry on
    one that records a span per message (only then is opentelemetry imported)."""
    if not enabled(flag):
        return Session
    from mcpgen.telemetry._serving import TracedSession  # noqa: PLC0415 (opt-in)

    return TracedSession


def instrument_client(connection: Connection, flag: bool | None) -> None:
    """With telemetry on, make `connection` record a span per outgoing message (only
    then is opentelemetry imported); otherwise leave it as it is."""
    if not enabled(flag):
        return
    from mcpgen.telemetry._calling import instrument  # noqa: PLC0415 (opt-in)

    instrument(connection)
