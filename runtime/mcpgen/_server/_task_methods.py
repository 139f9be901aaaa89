"""The Tasks extension's methods: `tasks/get`, `tasks/update`, `tasks/cancel` (modern
requests only), and the `taskIds` filter of `subscriptions/listen`.

Order of checks: the request declares the extension (else -32021), then the task is
found for this caller (else -32602), then the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from mcpgen._server._call import Call
from mcpgen._server._tasks import declared, missing
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore

__all__ = [
    "CancelParams",
    "GetParams",
    "ListenParams",
    "UpdateParams",
    "cancel_task",
    "get_task",
    "update_task",
]


# The extension's request params have no `_meta` in the pinned schema, but every modern
# request carries one (protocol version, client capabilities): decode it too.
class GetParams(x.GetTaskRequestParams, kw_only=True):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class UpdateParams(x.UpdateTaskRequestParams, kw_only=True):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CancelParams(x.CancelTaskRequestParams, kw_only=True):
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class _ListenFilter(t.SubscriptionFilter, kw_only=True):
    task_ids: list[str] | UnsetType = msgspec.field(default=UNSET, name="taskIds")


class ListenParams(t.SubscriptionsListenRequestParams, kw_only=True):
    """`subscriptions/listen` params with the extension's `taskIds` filter."""

    notifications: _ListenFilter


# -- the methods ----------------------------------------------------------------------------------
def _check(call: Call) -> None:
    if not declared(call):
        raise missing(call.method)


async def get_task(core: ServerCore, session: Any, call: Call, params: GetParams) -> Any:
    _check(call)
    return await core.tasks.get(params.task_id, call.principal)


async def update_task(core: ServerCore, session: Any, call: Call, params: UpdateParams) -> Any:
    _check(call)
    await core.tasks.update(params.task_id, call.principal, params.input_responses)
    return x.UpdateTaskResult()


async def cancel_task(core: ServerCore, session: Any, call: Call, params: CancelParams) -> Any:
    _check(call)
    await core.tasks.cancel(params.task_id, call.principal)
    return x.CancelTaskResult()
