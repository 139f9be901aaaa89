"""What a handler sees of its request, and how it asks the client for more input.

`Context` is passed to any handler parameter annotated with it. A handler that needs
input from the user or the client's model returns `InputRequired({...}, state=...)`
built with `elicit_form`, `elicit_url`, `sample` and `list_roots`. The library turns
that into an input-required result with sealed `requestState` (modern requests) or
into real server-to-client requests (legacy sessions); either way the same handler is
called again with the answers in `ctx.input_responses` and its state in `ctx.state`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from mcpgen_types import latest as t

__all__ = ["Context", "InputRequired", "elicit_form", "elicit_url", "list_roots", "sample"]


class InputRequired:
    """Returned by a tool, prompt or resource handler that needs input to finish."""

    __slots__ = ("requests", "state")

    def __init__(
        self, requests: Mapping[str, t.InputRequest] | None = None, *, state: Any = None
    ) -> None:
        if not requests and state is None:
            raise ValueError("InputRequired needs input requests, state, or both")
        self.requests = dict(requests or {})
        self.state = state

    def __repr__(self) -> str:
        return f"InputRequired({sorted(self.requests)}, state={self.state!r})"


def elicit_form(message: str, schema: Mapping[str, Any] | type) -> t.ElicitRequest:
    """Ask the user to fill a flat form. `schema` is a JSON Schema object whose
    properties are primitives, or a msgspec Struct class (converted here)."""
    if isinstance(schema, type):
        (top,), components = msgspec.json.schema_components([schema], ref_template="{name}")
        document: Mapping[str, Any] = components[top["$ref"]]
    else:
        document = schema
    requested = t.ElicitRequestFormParamsRequestedSchema(
        properties=dict(document.get("properties", {})),
        required=list(document["required"]) if "required" in document else UNSET,
    )
    return t.ElicitRequest(
        params=t.ElicitRequestParams(message=message, requested_schema=requested)
    )


def elicit_url(message: str, url: str) -> t.ElicitRequest:
    """Ask the user to visit a URL (out-of-band flows such as sign-ins or payments)."""
    return t.ElicitRequest(params=t.ElicitRequestParams(message=message, mode="url", url=url))


def sample(
    messages: list[t.SamplingMessage] | str,
    max_tokens: int,
    *,
    system_prompt: str | None = None,
    temperature: float | None = None,
    stop_sequences: list[str] | None = None,
    model_preferences: t.ModelPreferences | None = None,
    tools: list[t.Tool] | None = None,
    tool_choice: t.ToolChoice | None = None,
) -> t.CreateMessageRequest:
    """Ask the client's model for a completion. A string is one user message."""
    if isinstance(messages, str):
        messages = [t.SamplingMessage(role="user", content=t.TextContent(text=messages))]
    params = t.CreateMessageRequestParams(
        messages=messages,
        max_tokens=max_tokens,
        system_prompt=UNSET if system_prompt is None else system_prompt,
        temperature=UNSET if temperature is None else temperature,
        stop_sequences=UNSET if stop_sequences is None else stop_sequences,
        model_preferences=UNSET if model_preferences is None else model_preferences,
        tools=UNSET if tools is None else tools,
        tool_choice=UNSET if tool_choice is None else tool_choice,
    )
    return t.CreateMessageRequest(params=params)


def list_roots() -> t.ListRootsRequest:
    """Ask the client for its filesystem roots."""
    return t.ListRootsRequest()


class Context:
    """The request a handler is serving. Cheap: created only for handlers that ask."""

    __slots__ = ("_call",)

    def __init__(self, call: Any) -> None:
        self._call = call

    # -- identity --------------------------------------------------------------------------
    @property
    def request_id(self) -> str | int:
        return self._call.request_id  # type: ignore[no-any-return]

    @property
    def method(self) -> str:
        return self._call.method  # type: ignore[no-any-return]

    @property
    def era(self) -> str:
        """`"modern"` (stateless, per-request `_meta`) or `"legacy"` (initialize session)."""
        return self._call.era  # type: ignore[no-any-return]

    @property
    def protocol_version(self) -> str:
        return self._call.version  # type: ignore[no-any-return]

    @property
    def client_capabilities(self) -> t.ClientCapabilities:
        return self._call.capabilities()  # type: ignore[no-any-return]

    @property
    def client_info(self) -> t.Implementation | None:
        return self._call.client_info()  # type: ignore[no-any-return]

    @property
    def principal(self) -> str | None:
        """Who the transport authenticated, if anyone (binds requestState too)."""
        return self._call.principal  # type: ignore[no-any-return]

    @property
    def meta(self) -> dict[str, Any]:
        """The request's `_meta` object, every key included."""
        return self._call.meta  # type: ignore[no-any-return]

    # -- multi round-trip --------------------------------------------------------------------
    @property
    def input_responses(self) -> dict[str, Any]:
        """Answers to the previous round's input requests, by key (typed results)."""
        return self._call.input_responses  # type: ignore[no-any-return]

    @property
    def state(self) -> Any:
        """The state the handler returned with the previous round's InputRequired."""
        return self._call.state

    def input(self, key: str) -> Any:
        """The answer to input request `key`, or None if there is none yet."""
        return self._call.input_responses.get(key)

    # -- cancellation, progress, logging --------------------------------------------------
    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (stop early; no reply is sent)."""
        return self._call.cancelled  # type: ignore[no-any-return]

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress if the client asked for it (`_meta.progressToken`); values must
        increase, and ones that do not are dropped."""
        self._call.progress(progress, total, message)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message if the request's level (or the legacy session's) admits it."""
        self._call.log(level, data, logger)

    def debug(self, data: Any, logger: str | None = None) -> None:
        self._call.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> None:
        self._call.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> None:
        self._call.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> None:
        self._call.log("error", data, logger)
