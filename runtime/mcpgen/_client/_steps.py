"""The steps the client's state machines answer with; the caller performs them.

Leaf module of `mcpgen._client`: the round trip (`_mrtr`), the task watch (`_tasks`)
and the core's retry rule all speak these, so none of them imports another for them.
"""

from __future__ import annotations

import msgspec

from mcpgen_types import latest as t

__all__ = ["Done", "NeedInput", "Resend", "Retry", "Wait"]


class Done(msgspec.Struct, frozen=True):
    """Finished: `result` is the request's typed result."""

    result: msgspec.Struct


class NeedInput(msgspec.Struct, frozen=True):
    """Answer these input requests (key -> ElicitRequest, CreateMessageRequest, ...)."""

    requests: dict[str, t.InputRequest]


class Retry(msgspec.Struct, frozen=True):
    """Send the request again with only its state, after `delay` seconds."""

    delay: float


class Wait(msgspec.Struct, frozen=True):
    """Ask for the task's status again after `delay` seconds."""

    delay: float


class Resend(msgspec.Struct, frozen=True):
    """Send the same request once more (not a new round); first re-read the tool list
    when `refresh_tools`."""

    refresh_tools: bool = False
