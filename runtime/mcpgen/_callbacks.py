"""The user's client callbacks: which capabilities they declare, and how they answer
the server's input requests (elicitation, sampling, roots), whether those arrive as
input-required results (modern), task input requests (Tasks) or server-to-client
requests (legacy). A callback may be a plain function or a coroutine function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from mcpgen._client import ClientCore, Incoming
from mcpgen._errors import ClientError, McpError
from mcpgen_types import latest as t

__all__ = ["Callback", "Callbacks", "maybe_await"]

# A user's callback: its arguments depend on what it answers (see mcpgen.Client).
Callback = Callable[..., Any]


async def maybe_await(value: object) -> object:
    return await value if inspect.isawaitable(value) else value


class Callbacks:
    """The callbacks of one client (see the module docstring)."""

    def __init__(
        self,
        *,
        on_elicitation: Callback | None = None,
        on_sampling: Callback | None = None,
        on_roots: Callback | None = None,
        on_log: Callback | None = None,
        elicitation_modes: Sequence[str] = ("form",),
    ) -> None:
        self.handlers: dict[str, Callback | None] = {
            "elicitation/create": on_elicitation,
            "sampling/createMessage": on_sampling,
            "roots/list": on_roots,
        }
        self.on_log = on_log
        self.elicitation_modes = tuple(elicitation_modes)

    def capabilities(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The client capabilities the callbacks declare: (modern, legacy); a legacy
        session also hears about roots changing."""
        caps: dict[str, Any] = {}
        modes = self.elicitation_modes
        if self.handlers["elicitation/create"] is not None:
            caps["elicitation"] = {m: {} for m in modes if m != "form"} | (
                {"form": {}} if "form" in modes and len(modes) > 1 else {}
            )
        if self.handlers["sampling/createMessage"] is not None:
            caps["sampling"] = {}
        legacy = dict(caps)
        if self.handlers["roots/list"] is not None:
            caps["roots"] = {}
            legacy["roots"] = {"listChanged": True}
        return caps, legacy

    async def fulfil(self, method: str, params: object) -> object:
        """Answer one input request with the matching callback."""
        callback = self.handlers.get(method)
        if callback is None:
            if method == "elicitation/create":
                return t.ElicitResult(action="cancel")
            raise ClientError(f"the server asked for {method}, but no callback handles it")
        if method == "roots/list":
            value: Any = await maybe_await(callback())  # a list of roots or of URIs
            if isinstance(value, t.ListRootsResult):
                return value
            return t.ListRootsResult(
                roots=[r if isinstance(r, t.Root) else t.Root(uri=str(r)) for r in value]
            )
        return await maybe_await(callback(params))

    async def fulfil_all(self, requests: Mapping[str, t.InputRequest]) -> dict[str, object]:
        """Answers to a batch of input requests, by key."""
        answers = {}
        for key, request in requests.items():
            kind = str(type(request).__struct_config__.tag)
            answers[key] = await self.fulfil(kind, getattr(request, "params", None))
        return answers

    async def serve(self, core: ClientCore, incoming: Incoming) -> bytes:
        """The response frame to a legacy server-to-client request."""
        method = incoming.method or ""
        try:
            if method == "ping":
                result: object = {}
            else:
                info = t.METHODS.get(method)
                if info is None or info.direction != "input":
                    raise McpError(t.METHOD_NOT_FOUND, f"method not found: {method}")
                params = (
                    None
                    if info.params is None or incoming.params is None
                    else msgspec.convert(incoming.params, info.params)
                )
                result = await self.fulfil(method, params)
            return core.response(incoming.id, result)
        except McpError as exc:
            return core.error_response(incoming.id, exc.code, exc.message)
        except Exception as exc:
            return core.error_response(
                incoming.id, t.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            )
