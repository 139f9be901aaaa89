"""Authorization, decided by the core on the very request it dispatches.

A transport that authenticates its peer puts the verified grant on the channel
(`Channel.auth`: the token's scopes); the core never parses anything for it. Before a
request is dispatched, `refusal` reads what the request acts on from the params the
core itself decoded for the handler (the tool or prompt name, the resource URIs, the
completion's reference) and asks the live registry which scopes those need. There is
no second parser, so what is judged is what runs: a request whose params cannot be
decoded never reaches a handler at all, and one that names a feature needing a scope
the grant lacks is answered with a `Refusal` (HTTP 403; the HTTP app turns it into an
OAuth `insufficient_scope` challenge). Task ids are bound to their principal by the
task runner, not by scopes.

Without a grant on the channel (stdio, in-memory, an HTTP app without `auth=`) nothing
is enforced here: scopes are an HTTP authorization feature.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from msgspec import UNSET

from mcpgen import _jsonrpc as rpc
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._call import Call
    from mcpgen._server._core import Registry, ServerCore

__all__ = ["FORBIDDEN", "Refusal", "judge", "needed_scopes", "refusal"]

# A server-defined JSON-RPC code (the -32000..-32099 range) for a refused request; over
# HTTP the response is a 403 with an OAuth challenge, this is what a stream carries.
FORBIDDEN: Final = -32003
_NONE: frozenset[str] = frozenset()


class Refusal(rpc.ErrorFrame):
    """The error reply to a request the caller's grant does not cover; `scopes` is
    what the caller should ask for (every scope the request needs plus those it
    holds, so that one new grant covers both)."""

    scopes: frozenset[str]


def _targets(method: str, params: Any) -> Iterator[tuple[str, str]]:
    """(kind, name) of every feature the request acts on, from its decoded params."""
    if method == "tools/call":
        yield "tool", params.name
    elif method == "prompts/get":
        yield "prompt", params.name
    elif method in ("resources/read", "resources/subscribe"):
        yield "resource", params.uri
    elif method == "subscriptions/listen":  # a subscription delivers what a read would
        uris = params.notifications.resource_subscriptions
        for uri in () if uris is UNSET else uris:
            yield "resource", uri
    elif method == "completion/complete":  # completions describe the feature's arguments
        ref = params.ref
        if isinstance(ref, t.PromptReference):
            yield "prompt", ref.name
        else:
            yield "template", ref.uri


def _scopes_of(registry: Registry, kind: str, name: str) -> frozenset[str]:
    if kind == "tool":
        tool = registry.tools.get(name)
        return _NONE if tool is None else tool.scopes
    if kind == "prompt":
        prompt = registry.prompts.get(name)
        return _NONE if prompt is None else prompt.scopes
    exact = registry.resources.get(name)
    if exact is not None:
        return exact.scopes
    for template in registry.templates:  # the one the core would serve it with
        if kind == "template":
            if template.template.template == name:
                return template.scopes
        elif template.template.match(name) is not None:
            return template.scopes
    return _NONE


def needed_scopes(registry: Registry, method: str, params: Any) -> frozenset[str]:
    """Every scope a request for `method` with (decoded) `params` needs."""
    needed = _NONE
    for kind, name in _targets(method, params):
        needed = needed | _scopes_of(registry, kind, name)
    return needed


def refusal(core: ServerCore, call: Call) -> Refusal | None:
    """None when `call` (decoded: `call.params`) may be dispatched, else the reply that
    refuses it."""
    grant = call.auth
    if grant is None or not core.scoped:
        return None
    needed = needed_scopes(core.registry, call.method, call.params)
    if needed <= grant.scopes:
        return None
    return refused(call.request_id, needed, grant.scopes)


def judge(core: ServerCore, requests: list[Call]) -> Refusal | None:
    """One refusal for a batch when any of its requests is refused (then none runs:
    a client that steps up and sends the batch again runs each member once)."""
    if not core.scoped:
        return None
    needed, grant = _NONE, None
    for call in requests:  # the members of a batch share one channel, so one grant
        if call.auth is not None:
            grant = call.auth
            needed = needed | needed_scopes(core.registry, call.method, call.params)
    if grant is None or needed <= grant.scopes:
        return None
    return refused(UNSET, needed, grant.scopes)


def refused(request_id: Any, needed: Iterable[str], held: frozenset[str]) -> Refusal:
    wanted = frozenset(needed)
    frame = rpc.error_frame(
        request_id,
        FORBIDDEN,
        "forbidden: the token lacks a scope this request needs",
        {"requiredScopes": sorted(wanted)},
    )
    out = Refusal(frame)
    out.code, out.status, out.scopes = FORBIDDEN, 403, wanted | held
    return out
