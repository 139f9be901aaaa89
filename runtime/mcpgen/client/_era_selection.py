"""Era selection for a client `Connection`: the `server/discover` probe, the legacy
handshake (`initialize`), cached verdicts, and the switch to an older transport a link
offers. Each decision is the sans-I/O core's (`mcpgen._client`); this module sends what
it asks for through the connection's own exchange (so telemetry and a retry policy see
every step) and records the verdicts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Literal, Protocol

from mcpgen import _protocol as proto
from mcpgen._client import (
    ClientCore,
    Incoming,
    RequestId,
    Verdict,
    VerdictCache,
    initialize_refused,
)
from mcpgen._errors import ClientError, HttpStatusError, McpError
from mcpgen.transports._link_base import Link
from mcpgen_types import latest as t

__all__ = ["Answer", "Era", "Selecting", "select_era"]

Era = Literal["auto", "modern", "legacy"]
Answer = tuple[Incoming, int | None]  # a request's answer and the HTTP status it came with


class Selecting(Protocol):
    """What era selection uses of a connection (`mcpgen.client._connection.Connection`)."""

    core: ClientCore
    link: Link
    verdicts: VerdictCache
    era_choice: Era
    timeout: float
    probe_timeout: float

    def _attach(self, link: Link) -> None: ...

    async def _exchange(
        self, rid: RequestId, frame: bytes, headers: Mapping[str, str], timeout: float | None
    ) -> Answer: ...

    async def discover(self) -> t.DiscoverResult: ...


async def select_era(connection: Selecting) -> None:
    """Find the era to speak (see the module docstring), then take it."""
    if connection.era_choice == "modern":
        connection.core.adopt_modern()
        return
    if connection.era_choice == "legacy" or connection.link.legacy_only:
        await initialize(connection, remember=connection.era_choice == "auto")
        return
    key = connection.link.key()
    cached = connection.verdicts.get(key)
    if cached is not None:
        if cached.era == "sse":  # straight to the older transport
            with contextlib.suppress(ClientError):
                await fall_back(connection, "")
        if cached.era == "legacy" or connection.link.legacy_only:
            # Using a verdict does not renew it: only a probe does, after its TTL.
            await initialize(connection, cached.version)
            return
        if cached.era == "modern":
            connection.core.adopt_modern(cached.version)
            with contextlib.suppress(McpError, ClientError, TimeoutError):
                await connection.discover()
                return
        connection.verdicts.forget(key)  # the cached assumption failed: probe again
    await probe(connection)


async def fall_back(connection: Selecting, why: str) -> bool:
    """Replace the link by its older transport's, if it offers one."""
    older = await connection.link.fall_back(connection._attach, why)
    if older is None:
        return False
    connection.link = older
    return True


async def probe(connection: Selecting, version: str | None = None) -> None:
    """`server/discover` with `version` (the newest by default): modern, or the handshake."""
    rid, sent, frame = connection.core.request(
        "server/discover", {}, version=version or proto.LATEST
    )
    headers = connection.core.headers("server/discover", sent)
    try:
        incoming, status = await connection._exchange(rid, frame, headers, connection.probe_timeout)
    except TimeoutError:  # silent legacy servers never answer
        verdict = connection.core.probe_verdict(error={})
    except HttpStatusError as exc:  # refused without a JSON-RPC answer: not modern
        verdict = connection.core.probe_verdict(error={}, http_status=exc.status)
    else:
        if incoming.kind == "response":
            verdict = connection.core.probe_verdict(result=incoming.result)
        else:
            verdict = connection.core.probe_verdict(error=incoming.error, http_status=status)
    if verdict.era == "retry" and version is None:
        await probe(connection, verdict.version)
        return
    if verdict.era == "modern":
        connection.verdicts.put(connection.link.key(), Verdict("modern", connection.core.version))
        return
    await initialize(connection, remember=True)


async def initialize(
    connection: Selecting, version: str | None = None, *, remember: bool = False
) -> None:
    """The legacy handshake (`initialize`), falling back to an older transport the link
    offers when the endpoint refuses it; `remember`: cache the verdict."""
    rid, frame = connection.core.initialize(version)
    failure: HttpStatusError | None = None
    why: str | None = None
    try:
        incoming, status = await connection._exchange(rid, frame, {}, connection.timeout)
    except HttpStatusError as exc:  # refused without a JSON-RPC answer
        if not initialize_refused(exc.status, False):
            raise
        failure, why = exc, f"initialize answered HTTP {exc.status}"
    else:
        if incoming.kind == "error" and initialize_refused(status, incoming.id == rid):
            why = f"initialize answered HTTP {status} ({(incoming.error or {}).get('message')})"
    if why is not None:  # era detection's last step: an older transport may be there
        if not await fall_back(connection, why):
            raise failure or connection.core.raise_error(incoming.error or {})
        rid, frame = connection.core.initialize(version)
        incoming, _ = await connection._exchange(rid, frame, {}, connection.timeout)
    if incoming.kind != "response":
        raise connection.core.raise_error(incoming.error or {})
    initialized = connection.core.on_initialize(incoming.result)
    await connection.link.send(
        initialized, connection.core.headers("notifications/initialized", {})
    )
    if remember:  # only what a probe learned is cached; a pinned era says nothing
        era: Literal["sse", "legacy"] = "sse" if connection.link.legacy_only else "legacy"
        connection.verdicts.put(connection.link.key(), Verdict(era, connection.core.version))
    await connection.link.session_started(connection.core.version)
