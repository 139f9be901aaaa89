"""Await-style input: `await ctx.elicit(...)`, `await ctx.sample(...)`, `await ctx.list_roots()`.

Each await of one handler run gets a key from its position, `await.0`, `await.1`, ...
What answers it depends on the call:

- A legacy session's request (not a task): a real server-to-client request, sent by
  the session's `LegacyBridge` (`call.asker`) and awaited; the handler runs once.
- A modern request, or a task: replay. The answer to `await.<n>` is in this round's
  `inputResponses` or among the earlier rounds' answers the library carried in the
  handler state (sealed into `requestState`; a task keeps it in memory). The first await
  without an answer raises `InputPending`; where the library runs the handler it
  becomes an input-required round (`_mrtr.awaited_round`) and the next round runs the
  handler again from the top.

One call uses one style: awaiting after an `InputRequired` round, or returning
`InputRequired` after awaiting, fails the call (`check_style`, `check_mixing`).
This module also holds the rules shared with the `InputRequired` style: which method an
input request is, which capability it needs, and how an answer is typed.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import msgspec

from mcpgen import _protocol as proto
from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._call import Call
from mcpgen_types import latest as t

__all__ = [
    "AWAIT_PREFIX",
    "CARRIED",
    "DEFAULT_TIMEOUT",
    "Awaits",
    "InputPending",
    "await_input",
    "check_mixing",
    "input_request_method",
    "input_response",
    "missing_capability",
]

AWAIT_PREFIX: Final = "await."
CARRIED: Final = "mcpgen/awaits"  # the handler-state key under which answers ride along
DEFAULT_TIMEOUT: Final = 300.0  # seconds a legacy session's client gets to answer
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
_MIXED: Final = (
    "a handler either awaits input (ctx.elicit, ctx.sample, ctx.list_roots) or returns "
    "InputRequired, not both in one call"
)

R = TypeVar("R")


def input_request_method(request: Any) -> str:
    tag = type(request).__struct_config__.tag
    if not isinstance(tag, str) or tag not in t.METHODS or t.METHODS[tag].direction != "input":
        raise TypeError(
            f"not an input request: {request!r} (use elicit_form, elicit_url, sample, list_roots)"
        )
    return tag


def input_response(method: str, raw: Any) -> Any:
    """A client's answer, typed by the method of the request it answers."""
    result_type = t.METHODS[method].result
    if isinstance(raw, msgspec.Raw):
        return msgspec.json.decode(raw, type=result_type)
    return msgspec.convert(raw, result_type)


def missing_capability(caps: dict[str, Any], request: Any, method: str) -> dict[str, Any] | None:
    """The capability a request needs and the client lacks, or None."""
    if method == "elicitation/create":
        elicitation = caps.get("elicitation")
        url = request.params.mode == "url"
        if not isinstance(elicitation, dict):
            return {"elicitation": {"url": {}} if url else {}}
        if url and "url" not in elicitation:
            return {"elicitation": {"url": {}}}
        if not url and elicitation and "form" not in elicitation:
            return {"elicitation": {"form": {}}}
        return None
    if method == "sampling/createMessage":
        sampling = caps.get("sampling")
        if not isinstance(sampling, dict):
            return {"sampling": {}}
        if request.params.tools is not msgspec.UNSET and "tools" not in sampling:
            return {"sampling": {"tools": {}}}
        return None
    if method == "roots/list":
        return None if isinstance(caps.get("roots"), dict) else {"roots": {}}
    return None


class InputPending(BaseException):
    """A replayed await with no answer yet: the handler run ends here. A BaseException,
    so that a handler's `except Exception` lets it through to the library."""

    def __init__(self, key: str, request: Any, answered: dict[str, list[Any]]) -> None:
        super().__init__(key)
        self.key = key
        self.request = request
        self.answered = answered  # earlier awaits: key -> [method, answer as builtins]


class Awaits:
    """The awaits of one handler run (one `Context`): how many so far, and, when the
    call is replayed, what each was answered (carried into the next round)."""

    __slots__ = ("answered", "count")

    def __init__(self) -> None:
        self.count = 0
        self.answered: dict[str, list[Any]] = {}


async def await_input(
    call: Call, run: Awaits, request: Any, result: type[R], timeout: float | None
) -> R:
    """The answer to the next await of `run` (see the module docstring)."""
    key = f"{AWAIT_PREFIX}{run.count}"  # taken before any suspension: order is creation order
    run.count += 1
    method = input_request_method(request)
    check_style(call)
    if call.task is None and call.era == "legacy":
        if call.asker is None:
            raise ConfigurationError("this legacy call has no session to send requests through")
        answer = await call.asker.request(call, request, timeout)
    else:
        answer = _replayed(call, key, method)
        if answer is None:
            _check_can_ask(call, request, method)
            raise InputPending(key, request, dict(run.answered))
        run.answered[key] = [method, msgspec.to_builtins(answer)]
    if not isinstance(answer, result):
        raise McpError(t.INTERNAL_ERROR, f"the answer to {key} is not a {method} result")
    call.input_responses[key] = answer
    return answer


def _replayed(call: Call, key: str, method: str) -> Any:
    answer = call.input_responses.get(key)
    if answer is not None:
        return answer
    carried = call.state.get(CARRIED) if type(call.state) is dict else None
    if not isinstance(carried, dict) or key not in carried:
        return None
    found, raw = carried[key]  # sealed by us: its shape is ours
    if found != method:
        raise McpError(
            t.INTERNAL_ERROR,
            f"{key} asked for {found} in an earlier round and for {method} now: "
            "a handler's awaits must come in the same order every round",
        )
    return input_response(method, raw)


def _check_can_ask(call: Call, request: Any, method: str) -> None:
    if call.method not in MRTR_METHODS:
        raise McpError(t.INTERNAL_ERROR, f"{call.method} cannot ask the client for input")
    missing = missing_capability(call.caps, request, method)
    if missing is not None:
        raise proto.missing_capability(
            missing, f"{call.method} needs the client capability {missing}"
        )


def check_style(call: Call) -> None:
    """Awaiting after an `InputRequired` round (its state present) is mixing. Answers under
    keys the awaits never asked for are ignored, as unexpected extra answers must be."""
    state = call.state
    if call.rounds or (state is not None and not (type(state) is dict and CARRIED in state)):
        raise McpError(t.INTERNAL_ERROR, _MIXED)


def check_mixing(call: Call, state: Any) -> None:
    """Returning `InputRequired` (with `state`) after awaiting in the same call is mixing;
    the library's own awaited rounds carry `CARRIED` in their state."""
    if type(state) is dict and CARRIED in state:
        return
    carried = type(call.state) is dict and CARRIED in call.state
    if carried or any(key.startswith(AWAIT_PREFIX) for key in call.input_responses):
        raise McpError(t.INTERNAL_ERROR, _MIXED)
