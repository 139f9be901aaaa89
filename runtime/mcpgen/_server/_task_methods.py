"""The Tasks extension's methods, `tasks/get`, `tasks/update`, `tasks/cancel`, and
`subscriptions/listen`, whose filter the extension extends with `taskIds` (all modern
requests only).

Their params are the generated ones: `schema/patches.toml` gives the tasks requests the
`_meta` every modern request carries, and `schema/policy.toml` ([extensions]) makes
`ext_tasks.SubscriptionFilter` the core filter plus `taskIds`.

Order of checks for tasks/*: the request declares the extension (else -32021), then the
task is found for this caller (else -32602), then the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from mcpgen import _protocol as proto
from mcpgen._server._bus import Listener
from mcpgen._server._call import DEFERRED, Call
from mcpgen._server._peer import SessionView
from mcpgen._server._tasks import TASKS, declared, missing
from mcpgen_types import ext_tasks as x

if TYPE_CHECKING:
    from mcpgen._server._core import ServerCore

__all__ = ["cancel_task", "get_task", "listen", "update_task"]

_TaskParams = x.GetTaskRequestParams | x.UpdateTaskRequestParams | x.CancelTaskRequestParams


# -- the methods ----------------------------------------------------------------------------------
def _check(call: Call) -> None:
    if not declared(call):
        raise missing(call.method)


async def get_task(
    core: ServerCore, session: SessionView, call: Call, params: x.GetTaskRequestParams
) -> Any:
    _check(call)
    return await core.tasks.get(params.task_id, call.principal)


async def update_task(
    core: ServerCore, session: SessionView, call: Call, params: x.UpdateTaskRequestParams
) -> Any:
    _check(call)
    await core.tasks.update(params.task_id, call.principal, params.input_responses)
    return x.UpdateTaskResult()


async def cancel_task(
    core: ServerCore, session: SessionView, call: Call, params: x.CancelTaskRequestParams
) -> Any:
    _check(call)
    await core.tasks.cancel(params.task_id, call.principal)
    return x.CancelTaskResult()


# -- subscriptions/listen ------------------------------------------------------------------------
def listen(
    core: ServerCore, session: SessionView, call: Call, params: x.SubscriptionsListenRequestParams
) -> Any:
    task_ids = params.notifications.task_ids
    if task_ids is not UNSET and TASKS in core.capabilities().get("extensions", {}):
        if not declared(call):
            raise missing("notifications.taskIds")
        return _listen_tasks(core, session, call, params, task_ids)  # the store is async
    return _listen(core, session, call, params, None)


async def _listen_tasks(
    core: ServerCore,
    session: SessionView,
    call: Call,
    params: x.SubscriptionsListenRequestParams,
    task_ids: list[str],
) -> Any:
    accepted = await core.tasks.watchable(task_ids, call.principal)
    return _listen(core, session, call, params, accepted)


def _listen(
    core: ServerCore,
    session: SessionView,
    call: Call,
    params: x.SubscriptionsListenRequestParams,
    tasks: list[str] | None,
) -> Any:
    wanted = params.notifications
    caps = core.capabilities()
    honoured = x.SubscriptionFilter()  # what the server agrees to, echoed in the ack
    extra: dict[str, Any] = {}
    if tasks is not None:
        honoured.task_ids = tasks
        extra["taskIds"] = frozenset(tasks)
    if wanted.tools_list_changed is True and "tools" in caps:
        honoured.tools_list_changed = True
    if wanted.prompts_list_changed is True and "prompts" in caps:
        honoured.prompts_list_changed = True
    if wanted.resources_list_changed is True and "resources" in caps:
        honoured.resources_list_changed = True
    uris = (
        ()
        if wanted.resource_subscriptions is UNSET or "resources" not in caps
        else tuple(wanted.resource_subscriptions)
    )
    if uris:
        core.check_subscription(uris)
        honoured.resource_subscriptions = list(uris)
    listener = Listener(
        call.request_id,
        call.channel,
        honoured.tools_list_changed is True,
        honoured.prompts_list_changed is True,
        honoured.resources_list_changed is True,
        uris,
        extra,
    )
    ack = x.SubscriptionsAcknowledgedNotification(
        params=x.SubscriptionsAcknowledgedNotificationParams(
            notifications=honoured, meta={proto.META_SUBSCRIPTION_ID: call.request_id}
        )
    )
    call.channel.notify(msgspec.json.encode(ack))  # nothing may precede the ack on this stream
    session.register_listen(listener)
    return DEFERRED
