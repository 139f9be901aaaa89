"""Running a tool call as a task, in this process: the live half of the Tasks extension.

The `TaskRunner` creates a task's record in the `TaskStore`, runs the handler, and
writes every status change back to the store and, once written, announces it on the
bus. A record that says the task ended is final on every worker: when the store refuses
a write over it (another worker cancelled the task while its handler finished here),
the task takes the stored record, announces nothing, and its work here stops. It gets
what it uses and nothing else: the store, a clock, a `spawn` function (the Server hands in
one that makes an asyncio task; the core itself does no I/O), the bus's `publish`, and
the mask-errors flag. It never sees the core.

The live parts of a running task (the handler's call and coroutine, the answers of an
input round) stay in the runner of the worker that created the task: `tasks/update`
must reach that worker, and a `tasks/cancel` elsewhere marks the record cancelled and
its owner, seeing the status change on the bus (or its next write refused), stops the
work.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import msgspec

from mcpgen._errors import ConfigurationError, McpError
from mcpgen._server._awaits import InputPending
from mcpgen._server._bridge import loop_sleep
from mcpgen._server._call import Call
from mcpgen._server._content import failure, tool_outcome
from mcpgen._server._context import Context, Drive, InputRequired, finish
from mcpgen._server._defs import ToolDef
from mcpgen._server._masking import report
from mcpgen._server._mrtr import awaited_round, request_kinds
from mcpgen._server._running import RunningTask, write_record
from mcpgen._server._state import random_token
from mcpgen._server._tasks import (
    CANCELLED,
    COMPLETED,
    FAILED,
    GET_SHAPES,
    INPUT_REQUIRED,
    TERMINAL,
    WORKING,
    Nowhere,
    Publish,
    Spawn,
    as_task,
    detail,
    error_object,
    event,
    fields,
    forward,
    issue,
    task_call,
    too_many,
    typed_answers,
    unknown,
)
from mcpgen.stores import TaskEvent, TaskState, TaskStore, client_key
from mcpgen_types import ext_tasks as x
from mcpgen_types import latest as t

__all__ = ["RunningTask", "TaskRunner"]

Step = Callable[[Call, Callable[[], Awaitable[Any]]], Awaitable[Any]]
_SWEEP_EVERY_MS = 1000  # between sweeps of this worker's running tasks for expiry


class TaskRunner:
    """Creates task records and runs their handlers in this process."""

    def __init__(
        self,
        store: TaskStore,
        *,
        spawn: Spawn | None,
        publish: Publish,
        mask_errors: bool,
        ttl_ms: int | None,
        poll_ms: int,
        clock: Callable[[], float] = time.time,
        max_running: int | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.sleep = sleep if sleep is not None else loop_sleep(None)
        self.max_running = max_running  # per client (`client_key`); None: no bound
        self.spawn = spawn
        self.nowhere = Nowhere(spawn)
        self.publish = publish
        self.mask_errors = mask_errors
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.clock = clock
        self.worker = random_token(9)  # written as each record's owner
        self.running: dict[str, RunningTask] = {}  # unfinished tasks of this worker
        # One run of a task's work through the server's middleware (None: none).
        self.step: Step | None = None
        self._swept = 0

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # -- tools/call ------------------------------------------------------------------------
    def dispatch(
        self, call: Call, tool: ToolDef, kwargs: dict[str, Any]
    ) -> Coroutine[Any, Any, Any] | None:
        """A call of a task-enabled tool (arguments already validated): None to run it
        as an ordinary call, else a coroutine resolving to the answer (a CreateTaskResult,
        or for a detachable handler whatever it answers before it detaches)."""
        if not as_task(call, tool):
            return None
        client = client_key(call.principal, call.channel.peer)  # whom the task counts against
        if tool.detach:
            return self._until_detached(call, tool, kwargs, client)
        return self._begin(task_call(call, self.nowhere), tool, kwargs, None, client)

    async def _until_detached(
        self, call: Call, tool: ToolDef, kwargs: dict[str, Any], client: str | None
    ) -> Any:
        """Run the handler inside the request until it detaches (then answer with the
        task and let its runner resume the same coroutine) or returns (an ordinary
        answer, input-required rounds included)."""
        call.detachable = True
        if tool.context_param is not None:
            kwargs[tool.context_param] = Context(call)
        coro = tool.fn(**kwargs)
        try:
            detached, value = await Drive(coro)
        except McpError:
            raise
        except Exception as exc:
            return failure(tool.name, exc, self.mask_errors)
        finally:
            call.detachable = False
        if not detached:
            return tool_outcome(value, tool.definition)
        # From here on nothing goes to the request's stream; the task has its status.
        call.channel, call.cancel_hook = self.nowhere, None
        call.progress_token = call.log_rank = None
        return await self._begin(call, tool, kwargs, coro, client)

    async def _begin(
        self,
        call: Call,
        tool: ToolDef,
        kwargs: dict[str, Any],
        resumed: Coroutine[Any, Any, Any] | None,
        client: str | None,
    ) -> x.CreateTaskResult:
        if self.spawn is None:
            if resumed is not None:
                resumed.close()
            raise ConfigurationError("this ServerCore was built without a spawn function")
        now = self.now_ms()
        self._sweep(now)
        state = TaskState(
            id=random_token(18),  # unguessable: the id is all a caller needs
            principal=call.principal,
            status=WORKING,
            created_ms=now,
            updated_ms=now,
            ttl_ms=self.ttl_ms,
            poll_ms=self.poll_ms,
            owner=self.worker,
        )
        # Stored before the CreateTaskResult exists: a tasks/get right after it resolves;
        # refused when the client has as many tasks running as it may.
        most = self.max_running
        if not await self.store.create(msgspec.structs.replace(state), client=client, most=most):
            if resumed is not None:
                resumed.close()
            assert most is not None  # (only a bound refuses)
            raise too_many(most)
        live = RunningTask(self, state, call, tool, kwargs)
        call.task = live
        self.running[state.id] = live
        self._start(live, resumed)
        return x.CreateTaskResult(status="working", **fields(state))

    # -- running -----------------------------------------------------------------------------
    def _start(self, live: RunningTask, resumed: Coroutine[Any, Any, Any] | None) -> None:
        assert self.spawn is not None  # checked when the task was created
        live.handle = self.spawn(self._run(live, resumed))

    async def _run(self, live: RunningTask, resumed: Coroutine[Any, Any, Any] | None) -> None:
        """One run of the handler: to its outcome, or to its next input round (through
        the middleware chain, as a step of its own, when the server has one)."""
        try:
            if self.step is None:
                value = await self._work(live, resumed)
            else:
                value = await self.step(live.call, functools.partial(self._work, live, resumed))
        except McpError as exc:
            await self._settle(live, FAILED, error=exc)
            return
        except Exception as exc:  # from a middleware: our internal error
            await self._settle(live, FAILED, error=self._internal(live, exc))
            return
        except BaseException:
            await self._settle(live, CANCELLED)
            raise
        finally:
            live.handle = None
        try:
            if isinstance(value, InputRequired):
                await self._ask(live, value)
            else:
                await self._settle(live, COMPLETED, result=value)
        except McpError as exc:
            await self._settle(live, FAILED, error=exc)
        except Exception as exc:  # the value cannot become a result: our internal error
            await self._settle(live, FAILED, error=self._internal(live, exc))

    def _internal(self, live: RunningTask, exc: Exception) -> McpError:
        said = report(f"task {live.state.id}", exc, self.mask_errors)  # logged, referenced
        return McpError(t.INTERNAL_ERROR, "internal error" + said)

    async def _work(
        self, live: RunningTask, resumed: Coroutine[Any, Any, Any] | None
    ) -> t.CallToolResult | InputRequired:
        """The handler's outcome: its result (a failure is an error result), or the
        input round it asked for."""
        tool = live.tool
        try:
            if resumed is not None:
                value = await finish(resumed)
            else:
                kwargs = dict(live.kwargs)
                if tool.context_param is not None:
                    kwargs[tool.context_param] = Context(live.call)
                value = tool.fn(**kwargs)
                if tool.is_async:
                    value = await value
        except McpError:
            raise
        except Exception as exc:  # a tool failure is a completed call with isError
            return failure(tool.name, exc, self.mask_errors)
        except InputPending as pending:  # an unanswered await: input_required, as below
            return awaited_round(pending)
        return tool_outcome(value, tool.definition)

    async def _ask(self, live: RunningTask, out: InputRequired) -> None:
        """The handler needs input: the task waits in input_required with the requests
        under keys never used before in this task (a reused key gets a suffix)."""
        if live.state.status in TERMINAL:
            return  # cancelled meanwhile (the handler swallowed its cancellation)
        call = live.call
        kinds = request_kinds(call, out)
        if not out.requests:  # state only: run again at once with it
            call.input_responses, call.state = {}, out.state
            self._start(live, None)
            return
        pending, asked = issue(out.requests, kinds, live.issued)
        live.asked, live.answers, live.handler_state = asked, {}, out.state
        live.state.input_requests = pending
        await self._change(live, INPUT_REQUIRED)

    async def _settle(
        self,
        live: RunningTask,
        status: str,
        *,
        result: t.CallToolResult | None = None,
        error: McpError | None = None,
    ) -> None:
        if self._end(live, status, result, error):
            await self._save(live, announce=True)

    def _end(
        self,
        live: RunningTask,
        status: str,
        result: t.CallToolResult | None = None,
        error: McpError | None = None,
    ) -> bool:
        """Record a final status; False when the task had one already (a late outcome
        of a cancelled or expired task is dropped)."""
        state = live.state
        if state.status in TERMINAL:
            return False
        if result is not None:
            state.result = msgspec.to_builtins(result)
        if error is not None:
            state.error = error_object(error)
            if state.status_message is None:
                state.status_message = error.message
        state.input_requests = {}
        live.asked, live.answers, live.handler_state, live.kwargs = {}, {}, None, {}
        state.status, state.updated_ms = status, self.now_ms()
        self.running.pop(state.id, None)
        return True

    async def _change(self, live: RunningTask, status: str) -> None:
        live.state.status, live.state.updated_ms = status, self.now_ms()
        await self._save(live, announce=True)

    # -- writing records -----------------------------------------------------------------------
    async def _save(self, live: RunningTask, announce: bool = False) -> None:
        """Write the task's record (`write_record`); `announce`: its status changed."""
        if announce:
            live.news.append(event(live.state))
        stored = await write_record(live, self.store, self.publish)
        if stored is not None:  # it had ended elsewhere: that record stands
            live.state = stored
            self._stop(live, "")

    def save_soon(self, live: RunningTask, announce: bool = False) -> None:
        """`_save` from synchronous code (progress, shutdown): as work of its own. The
        change is queued now, so whichever write comes first announces it."""
        if announce:
            live.news.append(event(live.state))
        if self.spawn is not None and not live.writing:
            self.spawn(self._save(live))
        else:
            live.dirty = True

    # -- the tasks/* methods ---------------------------------------------------------------
    async def find(self, task_id: str, principal: str | None) -> TaskState:
        """The task's record, for its principal only."""
        self._sweep(self.now_ms())
        state = await self.store.get(task_id)
        if state is None:
            live = self.running.get(task_id)
            if live is not None:  # expired (or evicted) while it runs here: stop it
                self._expire(live)
            raise unknown(task_id)
        if state.principal != principal:
            raise unknown(task_id)
        return state

    async def get(self, task_id: str, principal: str | None) -> Any:
        """The tasks/get result."""
        return detail(await self.find(task_id, principal), GET_SHAPES)

    async def update(self, task_id: str, principal: str | None, responses: dict[str, Any]) -> None:
        """Answers to outstanding input requests (others are ignored); once a round is
        fully answered the handler runs again with the answers and its state."""
        state = await self.find(task_id, principal)
        if state.status != INPUT_REQUIRED:
            return
        live = self.running.get(task_id)
        if live is None:  # it runs on another worker: the answers go there on the bus
            await forward(self.store, self.publish, self.sleep, state, principal, responses)
            return
        pending = live.state.input_requests
        typed = typed_answers(pending, live.asked, responses)
        if not typed:
            return
        answered = {wire for wire, _, _ in typed}
        live.state.input_requests = {k: v for k, v in pending.items() if k not in answered}
        for _, key, answer in typed:
            live.answers[key] = answer
        if live.state.input_requests:
            await self._change(live, INPUT_REQUIRED)
            return
        call = live.call
        call.input_responses, call.state = live.answers, live.handler_state
        live.asked, live.answers, live.handler_state = {}, {}, None
        await self._change(live, WORKING)
        if live.state.status == WORKING:  # else it ended elsewhere meanwhile
            self._start(live, None)

    async def cancel(self, task_id: str, principal: str | None) -> None:
        """Cooperative: the status is cancelled at once and the running work is cancelled
        (by its owner, which sees the status change on the bus, if that is not us)."""
        state = await self.find(task_id, principal)
        live = self.running.get(task_id)
        if live is not None:
            if self._stop(live, "cancelled by the client"):
                await self._save(live, announce=True)
            return
        if state.status in TERMINAL:
            return
        state.status, state.status_message = CANCELLED, "cancelled by the client"
        state.updated_ms, state.input_requests = self.now_ms(), {}
        if await self.store.put(state) is None:  # else it ended meanwhile: nothing to say
            self.publish(event(state))

    def observe(self, change: TaskEvent) -> None:
        """A status change seen on the bus: another worker cancelled a task we run."""
        live = self.running.get(change.task_id)
        if live is not None and change.detail.get("status") == CANCELLED:
            message = change.detail.get("statusMessage")
            self._stop(live, message if isinstance(message, str) else "cancelled")
            self.save_soon(live)

    async def watchable(self, task_ids: list[str], principal: str | None) -> list[str]:
        """Of `task_ids`, those a listen stream of `principal` may follow."""
        accepted = []
        for task_id in dict.fromkeys(task_ids):
            state = await self.store.get(task_id)
            if state is not None and state.principal == principal:
                accepted.append(task_id)
        return accepted

    # -- ending work ---------------------------------------------------------------------------
    def _stop(self, live: RunningTask, message: str) -> bool:
        """Cancel a running task here; False when it had ended already (its work, if
        any still runs, is cancelled all the same: the task took another's record)."""
        handle, ended = live.handle, live.state.status in TERMINAL
        live.call.cancelled = True
        if ended:
            self.running.pop(live.id, None)
        else:
            live.state.status_message = message
            self._end(live, CANCELLED)
        if handle is not None:
            handle.cancel()
        return not ended

    def _sweep(self, now_ms: int) -> None:
        """Cancel this worker's tasks past their ttl (the store forgets their records)."""
        if now_ms - self._swept < _SWEEP_EVERY_MS:
            return
        self._swept = now_ms
        for live in list(self.running.values()):
            ttl = live.state.ttl_ms
            if ttl is not None and now_ms >= live.state.created_ms + ttl:
                self._expire(live)

    def _expire(self, live: RunningTask) -> None:
        if self._stop(live, "expired"):
            self.save_soon(live, announce=True)

    def close(self, message: str = "the server shut down") -> list[RunningTask]:
        """Server shutdown: every unfinished task of this worker is cancelled (with
        `message`); the ones it cancelled, whose records `write` can wait for."""
        stopped = [live for live in list(self.running.values()) if self._stop(live, message)]
        for live in stopped:
            self.save_soon(live, announce=True)
        return stopped

    async def write(self, live: RunningTask) -> None:
        """Write the task's record now (unless a write is under way, which takes it)."""
        await self._save(live)
