"""The keywords a `Client` takes (and `Client.stdio/http/sse/memory` pass on), typed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from mcpgen._client import VerdictCache
from mcpgen.client._callbacks import (
    ElicitationCallback,
    LogCallback,
    RootsCallback,
    SamplingCallback,
)
from mcpgen.client._connection import Era
from mcpgen.client._middleware import ClientMiddleware, RetryPolicy

__all__ = ["ClientOptions", "PageOptions"]


class ClientOptions(TypedDict, total=False):
    """The keywords of `Client(link, ...)`, which `Client.stdio/http/sse/memory` pass on."""

    era: Era
    name: str
    version: str
    on_elicitation: ElicitationCallback | None
    on_sampling: SamplingCallback | None
    on_roots: RootsCallback | None
    on_log: LogCallback | None
    elicitation_modes: Sequence[str]
    log_level: str | None
    timeout: float
    probe_timeout: float
    max_rounds: int
    cache: bool
    verdicts: VerdictCache | None
    telemetry: bool | None
    extensions: Mapping[str, Mapping[str, Any]] | None
    apps: bool
    middleware: Sequence[ClientMiddleware]
    retry: RetryPolicy | None


class PageOptions(TypedDict, total=False):
    """The keywords of `Client.list_tools` and the other lists: `all_pages` (default
    True: follow every cursor), `refresh` (ask again instead of a cached page) and
    `timeout` (seconds per page; default the client's)."""

    all_pages: bool
    refresh: bool
    timeout: float | None
