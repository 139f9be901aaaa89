"""Multi round-trip requests: sealing a round, opening a retry, and the legacy bridge.

Modern: a handler's InputRequired becomes an input-required result whose
`requestState` seals the handler state plus which method each input key asked for
(so a stateless retry can type the answers). Legacy: each input request becomes a
real server-to-client request in the session's revision; the answers are typed the
same way and handed to the same handler. An unanswered await of the await style
(`_awaits.InputPending`) becomes a round of the same shape (`awaited_round`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from mcpgen import _protocol as proto
from mcpgen._errors import McpError
from mcpgen._server._awaits import (
    CARRIED,
    InputPending,
    check_mixing,
    input_request_method,
    input_response,
    missing_capability,
)
from mcpgen._server._context import InputRequired
from mcpgen._server._state import Sealer
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._call import Call


# What sealing a round needs of the core and of the method's spec (narrow, so that this
# module, which the task runner uses too, imports neither the core nor the method table).
class _Sealing(Protocol):
    @property
    def sealer(self) -> Sealer: ...


class _Digest(Protocol):
    @property
    def digest(self) -> Callable[[Any], str] | None: ...


__all__ = [
    "awaited_round",
    "input_request_method",
    "input_required",
    "input_response",
    "legacy_input_request",
    "open_retry",
    "request_kinds",
]


def request_kinds(call: Call, out: InputRequired) -> dict[str, str]:
    """The method of each input request, once the client declared what each one needs."""
    check_mixing(call, out.state)
    kinds = {}
    for key, request in out.requests.items():
        method = input_request_method(request)
        missing = missing_capability(call.caps, request, method)
        if missing is not None:
            raise proto.missing_capability(
                missing, f"{call.method} needs the client capability {missing}"
            )
        kinds[key] = method
    return kinds


def awaited_round(pending: InputPending) -> InputRequired:
    """The round an unanswered await ends: its request, and the answers so far as the
    state the next round opens (see `_awaits`)."""
    return InputRequired({pending.key: pending.request}, state={CARRIED: pending.answered})


def input_required(
    core: _Sealing, spec: _Digest, call: Call, params: Any, out: InputRequired
) -> t.InputRequiredResult:
    kinds = request_kinds(call, out)
    assert spec.digest is not None
    token = core.sealer.seal(
        {"s": out.state, "k": kinds},
        method=call.method,
        digest=spec.digest(params),
        principal=call.principal,
    )
    return t.InputRequiredResult(
        input_requests=out.requests or msgspec.UNSET,
        request_state=token,
        result_type="input_required",
    )


def open_retry(core: _Sealing, spec: _Digest, call: Call, params: Any) -> None:
    """On a retry, verify `requestState` and type `inputResponses` into the call.

    With sealed state the methods it recorded type each answer; without state (a
    client may answer without echoing any) an answer is typed by its shape.
    """
    token = params.request_state
    kinds: dict[str, str] = {}
    if token is not msgspec.UNSET:
        assert spec.digest is not None
        body = core.sealer.open(
            token, method=call.method, digest=spec.digest(params), principal=call.principal
        )
        if not isinstance(body, dict) or not isinstance(body.get("k"), dict):
            raise McpError(proto.INVALID_PARAMS, "requestState is malformed")
        call.state = body.get("s")
        kinds = body["k"]
    answers = params.input_responses
    if answers is msgspec.UNSET:
        return
    for key, raw in answers.items():
        method = kinds.get(key) if token is not msgspec.UNSET else _shape_method(raw)
        if method is None:
            continue  # unexpected extra answers are ignored
        try:
            call.input_responses[key] = input_response(method, raw)
        except msgspec.ValidationError as exc:
            raise McpError(
                proto.INVALID_PARAMS,
                f"inputResponses[{key!r}] is not a valid {method} result: {exc}",
            ) from None


def _shape_method(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        raise McpError(proto.INVALID_PARAMS, "each inputResponses entry must be an object")
    if "action" in raw:
        return "elicitation/create"
    if "roots" in raw:
        return "roots/list"
    if "model" in raw or "role" in raw:
        return "sampling/createMessage"
    return None


def legacy_input_request(version: str, caps: dict[str, Any], request: Any) -> dict[str, Any]:
    """`method` and `params` of the real request a legacy session receives."""
    method = input_request_method(request)
    info = proto.legacy_methods(version).get(method)
    missing = missing_capability(caps, request, method)
    if info is None or (
        method == "elicitation/create"
        and request.params.mode == "url"
        and version not in proto.URL_ELICITATION
    ):
        missing = missing or {method.split("/")[0]: {}}
    if missing is not None or info is None:
        raise McpError(
            proto.INVALID_PARAMS,
            f"this request needs the client capability {missing}, "
            f"which the {version} session did not declare",
        )
    if request.params is msgspec.UNSET:
        return {"method": method}
    params = msgspec.to_builtins(request.params)
    if method == "elicitation/create" and params.get("mode") == "url":
        params["elicitationId"] = uuid.uuid4().hex
    typed = msgspec.convert(params, info.params)  # drops what the revision does not know
    return {"method": method, "params": msgspec.to_builtins(typed)}
