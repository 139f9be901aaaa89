"""The user's client callbacks: their signatures (Protocols), which capabilities they
declare, and how they run. Each may be a plain function or a coroutine function.

| callback | called with | returns |
|---|---|---|
| `progress=` (per request) | `progress, total, message` | nothing |
| `on_log` | `level, data, logger` | nothing |
| `on_elicitation` | an `ElicitRequestParams` | an `ElicitResult` (or its dict) |
| `on_sampling` | a `CreateMessageRequestParams` | a `CreateMessageResult` (or its dict) |
| `on_roots` | nothing | `Root`s or URIs, or a `ListRootsResult` |

Every callback runs guarded: what it raises is logged on `mcpgen.client` with its
traceback and never reaches the connection's reader, so the request it came with still
gets its answer. A failing notification callback (progress, log) is skipped. A failing
input callback is a failed answer: a legacy server-to-client request gets a JSON-RPC
internal error naming the callback; in an input round (modern, or a task's input) an
elicitation is answered "cancel", as when there is no `on_elicitation`, and sampling or
roots end the call with a `CallbackError`, as a missing callback does. A callback that
refuses on purpose raises `McpError(code, message)`: nothing is logged, a legacy request
is answered with that error, and in an input round it counts as a failure (elicitation
"cancel"; sampling and roots end the call with that `McpError`).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

import msgspec

from mcpgen._client import ClientCore, Incoming
from mcpgen._errors import ClientError, McpError
from mcpgen_types import latest as t

__all__ = [
    "CallbackError",
    "Callbacks",
    "ElicitationCallback",
    "LogCallback",
    "ProgressCallback",
    "RootsCallback",
    "SamplingCallback",
    "notify",
]

log = logging.getLogger("mcpgen.client")

ElicitAnswer = t.ElicitResult | Mapping[str, object]
SamplingAnswer = t.CreateMessageResult | Mapping[str, object]
RootsAnswer = t.ListRootsResult | Iterable[t.Root | str]


class ProgressCallback(Protocol):
    """`progress=` of one request: called for each `notifications/progress` about it
    with the progress so far, the total (None when unknown) and a message (or None)."""

    def __call__(
        self, progress: float, total: float | None, message: str | None, /
    ) -> Awaitable[None] | None: ...


class LogCallback(Protocol):
    """`on_log`: called for each `notifications/message` with its level ("info",
    "error", ...), its data (any JSON value) and the logger's name (or None)."""

    def __call__(
        self, level: str, data: object, logger: str | None, /
    ) -> Awaitable[None] | None: ...


class ElicitationCallback(Protocol):
    """`on_elicitation`: answers a server's question to the user (form or URL mode)."""

    def __call__(
        self, params: t.ElicitRequestParams, /
    ) -> ElicitAnswer | Awaitable[ElicitAnswer]: ...


class SamplingCallback(Protocol):
    """`on_sampling`: answers a server's request for an LLM completion."""

    def __call__(
        self, params: t.CreateMessageRequestParams, /
    ) -> SamplingAnswer | Awaitable[SamplingAnswer]: ...


class RootsCallback(Protocol):
    """`on_roots`: the client's roots, as `Root`s or URIs, or a whole ListRootsResult."""

    def __call__(self) -> RootsAnswer | Awaitable[RootsAnswer]: ...


class CallbackError(ClientError):
    """A callback raised while answering the server (the cause is chained)."""

    def __init__(self, name: str, exc: BaseException) -> None:
        super().__init__(f"the client's {name} callback failed ({type(exc).__name__})")
        self.callback = name


_NAMES = {
    "elicitation/create": "on_elicitation",
    "sampling/createMessage": "on_sampling",
    "roots/list": "on_roots",
}


async def _guarded(name: str, pending: Awaitable[object]) -> None:
    try:
        await pending
    except Exception:
        log.exception("the client's %s callback raised", name)


def notify(
    name: str,
    callback: Callable[..., object],
    args: tuple[object, ...],
    spawn: Callable[[Coroutine[Any, Any, None]], object],
) -> None:
    """Run a notification callback; a coroutine function's rest is `spawn`ed. What it
    raises is logged, never raised: the caller is the connection's reader."""
    try:
        value = callback(*args)
    except Exception:
        log.exception("the client's %s callback raised", name)
        return
    if inspect.isawaitable(value):
        spawn(_guarded(name, value))


class Callbacks:
    """The callbacks of one client (see the module docstring)."""

    def __init__(
        self,
        *,
        on_elicitation: ElicitationCallback | None = None,
        on_sampling: SamplingCallback | None = None,
        on_roots: RootsCallback | None = None,
        on_log: LogCallback | None = None,
        elicitation_modes: Sequence[str] = ("form",),
    ) -> None:
        self.handlers: dict[str, Callable[..., object] | None] = {
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
        """Answer one input request with the matching callback; CallbackError when the
        callback raises (logged with its traceback)."""
        callback = self.handlers.get(method)
        if callback is None:
            if method == "elicitation/create":
                return t.ElicitResult(action="cancel")
            raise ClientError(f"the server asked for {method}, but no callback handles it")
        try:
            value = callback() if method == "roots/list" else callback(params)
            if inspect.isawaitable(value):
                value = await value
            if method != "roots/list" or isinstance(value, t.ListRootsResult):
                return value
            roots = cast(Iterable[object], value)
            return t.ListRootsResult(
                roots=[r if isinstance(r, t.Root) else t.Root(uri=str(r)) for r in roots]
            )
        except McpError:
            raise  # a deliberate refusal, answered with its own code and message
        except Exception as exc:
            name = _NAMES[method]
            log.exception("the client's %s callback raised", name)
            raise CallbackError(name, exc) from exc

    async def fulfil_all(self, requests: Mapping[str, t.InputRequest]) -> dict[str, object]:
        """Answers to a batch of input requests (an input round or a task's), by key."""
        answers = {}
        for key, request in requests.items():
            kind = str(type(request).__struct_config__.tag)
            try:
                answers[key] = await self.fulfil(kind, getattr(request, "params", None))
            except (CallbackError, McpError):
                if kind != "elicitation/create":
                    raise
                # An input round cannot carry an error: decline, as without a callback.
                answers[key] = t.ElicitResult(action="cancel")
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
        except CallbackError as exc:  # its message names the callback, never the traceback
            return core.error_response(incoming.id, t.INTERNAL_ERROR, str(exc))
        except Exception as exc:
            return core.error_response(
                incoming.id, t.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            )
