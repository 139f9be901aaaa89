"""The Tasks extension's methods: `tasks/get`, `tasks/update`, `tasks/cancel` (modern
requests only). Their params are the generated ones (`schema/patches.toml` gives them the
`_meta` every modern request carries); the `taskIds` filter of `subscriptions/listen` is
the generated `ext_tasks.SubscriptionFilter` (`schema/policy.toml`, [extensions]).

Order of checks: the request declares the extension (else -32021), then the task is
found for this caller (else -32602), then the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpgen._server._call import Call
from mcpgen._server._tasks import GET_SHAPES, TaskRecord, declared, missing
from mcpgen_types import ext_tasks as x

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore

__all__ = ["cancel_task", "get_task", "update_task"]

_TaskParams = x.GetTaskRequestParams | x.UpdateTaskRequestParams | x.CancelTaskRequestParams


# -- the methods ----------------------------------------------------------------------------------
def _record(core: ServerCore, call: Call, params: _TaskParams) -> TaskRecord:
    if not declared(call):
        raise missing(call.method)
    return core.tasks.find(params.task_id, call.principal)


def get_task(core: ServerCore, session: Any, call: Call, params: x.GetTaskRequestParams) -> Any:
    return _record(core, call, params).detail(GET_SHAPES)


def update_task(
    core: ServerCore, session: Any, call: Call, params: x.UpdateTaskRequestParams
) -> Any:
    core.tasks.update(_record(core, call, params), params.input_responses)
    return x.UpdateTaskResult()


def cancel_task(
    core: ServerCore, session: Any, call: Call, params: x.CancelTaskRequestParams
) -> Any:
    core.tasks.cancel(_record(core, call, params))
    return x.CancelTaskResult()
