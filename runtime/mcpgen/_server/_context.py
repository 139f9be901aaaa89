"""What a handler sees of its request, and how it asks the client for more input.

`Context` is passed to any handler parameter annotated with it. A handler that needs
input from the user or the client's model has two styles (one per call):

- it returns `InputRequired({...}, state=...)` built with `elicit_form`, `elicit_url`,
  `sample` and `list_roots`. The library turns that into an input-required result with
  sealed `requestState` (modern requests) or into real server-to-client requests
  (legacy sessions); either way the same handler is called again with the answers in
  `ctx.input_responses` and its state in `ctx.state`;
- it awaits `ctx.elicit(...)`, `ctx.elicit_url(...)`, `ctx.sample(...)` or
  `ctx.list_roots()`: in a legacy session a real request, awaited; in a modern request
  or a task the handler is replayed from the top each round (`_awaits`).
"""

from __future__ import annotations

from collections.abc import Coroutine, Generator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from msgspec import UNSET

from mcpgen._errors import McpError
from mcpgen._server._apps import ui_capability
from mcpgen._server._awaits import DEFAULT_TIMEOUT, Awaits, await_input
from mcpgen._server._call import Call, RequestInfo
from mcpgen._server._elicited import Elicited, form_schema, validated
from mcpgen_types import latest as t
from mcpgen_types.ext_apps import McpUiClientCapabilities

if TYPE_CHECKING:
    from mcpgen.auth._tokens import AccessToken

__all__ = [
    "DETACH",
    "Context",
    "InputRequired",
    "elicit_form",
    "Drive",
    "elicit_url",
    "finish",
    "list_roots",
    "sample",
]


class _Detach:
    """What `await ctx.detach()` yields to the library's driver of the handler: the
    driver stops there, answers the request with the task, and resumes the same
    coroutine in the task's own runner. Never reaches the event loop."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, Any, None]:
        yield self


DETACH = _Detach()


class Drive:
    """Await a handler coroutine step by step, passing every other step to the event
    loop, until it returns -> (False, value) or awaits `ctx.detach()` -> (True, None).
    There it stays suspended, for another task to drive on."""

    __slots__ = ("coro",)

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro

    def __await__(self) -> Generator[Any, Any, tuple[bool, Any]]:
        coro = self.coro
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                return False, stop.value
            if step is DETACH:
                return True, None
            try:
                value, error = (yield step), None
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation included: the handler sees it
                value, error = None, exc


async def finish(coro: Coroutine[Any, Any, Any]) -> Any:
    """Drive a (detached) handler coroutine to its end."""
    while True:
        detached, value = await Drive(coro)
        if not detached:  # only a stray DETACH gets here: detach() is a no-op in a task
            return value


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
    document = form_schema(schema) if isinstance(schema, type) else schema
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


R = TypeVar("R")
T = TypeVar("T")
# The request builders, under names the Context's own methods do not shadow.
_form_request, _url_request, _sample_request = elicit_form, elicit_url, sample
_roots_request = list_roots


class Context:
    """The request a handler is serving. Cheap: created only for handlers that ask."""

    __slots__ = ("_awaits", "_call")

    def __init__(self, call: Call) -> None:
        self._call = call
        self._awaits: Awaits | None = None

    # -- identity --------------------------------------------------------------------------
    @property
    def request_id(self) -> str | int:
        """The JSON-RPC id of the request being handled."""
        return self._call.request_id

    @property
    def method(self) -> str:
        """The request's method, e.g. `"tools/call"`."""
        return self._call.method

    @property
    def era(self) -> str:
        """`"modern"` (stateless, per-request `_meta`) or `"legacy"` (initialize session)."""
        return self._call.era

    @property
    def protocol_version(self) -> str:
        """The revision the client speaks on this request."""
        return self._call.version

    @property
    def client_capabilities(self) -> t.ClientCapabilities:
        """What the client declared it can answer (elicitation, sampling, roots)."""
        return self._call.capabilities()

    @property
    def ui(self) -> McpUiClientCapabilities | None:
        """What the client declared of MCP Apps; None when it cannot render an app (a tool
        linked to one then answers with content that stands on its own)."""
        return ui_capability(self._call.caps)

    @property
    def client_info(self) -> t.Implementation | None:
        """The client's name and version, when it sent them."""
        return self._call.client_info()

    @property
    def principal(self) -> str | None:
        """Who the transport authenticated, if anyone (binds requestState too)."""
        return self._call.principal

    @property
    def auth(self) -> AccessToken | None:
        """The caller's verified bearer token (HTTP with `auth=`); None on stdio."""
        return self._call.auth

    @property
    def request(self) -> RequestInfo | None:
        """The HTTP request that carried this one (method, path, query, headers, client
        address), on Streamable HTTP and HTTP+SSE; None on stdio and in memory. A task
        keeps its creating request's."""
        return self._call.origin.request_info()

    @property
    def session_id(self) -> str | None:
        """The legacy session's id where the transport names one (`Mcp-Session-Id` on
        Streamable HTTP, the `session_id` of HTTP+SSE); None for modern requests and on
        stdio (one connection, one session) and in memory."""
        if self._call.era != "legacy":
            return None
        return self._call.origin.session_id()

    @property
    def meta(self) -> dict[str, Any]:
        """The request's `_meta` object, every key included."""
        return self._call.meta

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan (`Server(lifespan=...)`) yielded; None without one."""
        return self._call.lifespan

    async def read_resource(self, uri: str) -> list[t.ResourceContentsVariant]:
        """Read one of this server's own resources (or a template's match), as a client's
        `resources/read` would, without a round trip: its contents. Raises McpError
        when no resource or template serves `uri`. The reader runs as part of this
        request (its `Context` is this one), so scopes are not checked again."""
        core = self._call.core
        if core is None:  # only a Context built by hand has no core
            raise McpError(t.INTERNAL_ERROR, "this context has no server to read from")
        result = core.read_own(self._call, uri)
        if isinstance(result, Coroutine):
            result = await result
        if isinstance(result, InputRequired):
            raise McpError(t.INTERNAL_ERROR, f"resource {uri!r} asks for input; read it directly")
        return list(result.contents)

    # -- multi round-trip --------------------------------------------------------------------
    @property
    def input_responses(self) -> dict[str, Any]:
        """Answers to the previous round's input requests, by key (typed results)."""
        return self._call.input_responses

    @property
    def state(self) -> Any:
        """The state the handler returned with the previous round's InputRequired."""
        return self._call.state

    def input(self, key: str) -> Any:
        """The answer to input request `key`, or None if there is none yet."""
        return self._call.input_responses.get(key)

    # -- await-style input (docs/guide/input-requests.md) --------------------------------------
    # In a modern request or a task the handler runs again from the top for every answer:
    # code before an await runs once per round there (once in a legacy session).
    @overload
    async def elicit(
        self, message: str, schema: type[T], *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> Elicited[T]: ...

    @overload
    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> t.ElicitResult: ...

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any] | type[T],
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> t.ElicitResult | Elicited[T]:
        """Ask the user to fill a flat form and return the answer: `action` is "accept"
        (with `content`), "decline" or "cancel". `schema` is a JSON Schema object of
        primitive properties (the answer is the ElicitResult), or a type (msgspec Struct,
        dataclass, TypedDict, pydantic model): then the answer is an `Elicited` whose
        `data` is the content validated as that type. Raises McpError when the client
        cannot elicit or its answer does not fit; `timeout` (legacy sessions) raises
        TimeoutError."""
        answer = await self._ask(_form_request(message, schema), t.ElicitResult, timeout)
        return validated(answer, schema) if isinstance(schema, type) else answer

    async def elicit_url(
        self, message: str, url: str, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> t.ElicitResult:
        """Ask the user to visit `url` (out-of-band flows); "accept" means they agreed to
        open it, not that the flow there finished."""
        return await self._ask(_url_request(message, url), t.ElicitResult, timeout)

    async def sample(
        self,
        messages: list[t.SamplingMessage] | str,
        max_tokens: int,
        *,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: t.ModelPreferences | None = None,
        tools: list[t.Tool] | None = None,
        tool_choice: t.ToolChoice | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> t.CreateMessageResult:
        """Ask the client's model for a completion (a string is one user message)."""
        request = _sample_request(
            messages,
            max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_preferences=model_preferences,
            tools=tools,
            tool_choice=tool_choice,
        )
        return await self._ask(request, t.CreateMessageResult, timeout)

    async def list_roots(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> t.ListRootsResult:
        """The client's filesystem roots."""
        return await self._ask(_roots_request(), t.ListRootsResult, timeout)

    async def _ask(self, request: Any, result: type[R], timeout: float | None) -> R:
        if self._awaits is None:
            self._awaits = Awaits()
        return await await_input(self._call, self._awaits, request, result, timeout)

    # -- tasks (the io.modelcontextprotocol/tasks extension) --------------------------------
    @property
    def task_id(self) -> str | None:
        """The id of the task this handler runs as, or None when it answers the request
        itself (the tool is not task-enabled, or the client did not declare the extension)."""
        task = self._call.task
        return None if task is None else task.id

    async def detach(self) -> None:
        """For tools registered with `detach=True`: answer the request with a task now and
        go on running as that task. Before this point the handler runs inside the request
        (it may ask for input with `InputRequired` rounds); afterwards the client polls the
        task. Await it directly in the handler. A no-op when there is nothing to detach
        from (already a task, or the client cannot take one)."""
        if self._call.detachable and self._call.task is None:
            await DETACH

    # -- cancellation, progress, logging --------------------------------------------------
    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request or its task (stop early)."""
        return self._call.cancelled

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress if the client asked for it (`_meta.progressToken`); values must
        increase, and ones that do not are dropped. In a task it sets the task's
        `statusMessage` instead (tasks carry no progress notifications)."""
        self._call.progress(progress, total, message)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message if the request's level (or the legacy session's) admits it
        (dropped in a task: tasks carry no log notifications)."""
        self._call.log(level, data, logger)

    def debug(self, data: Any, logger: str | None = None) -> None:
        """Send a log message at level debug to the client (if it asked for that level)."""
        self._call.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> None:
        """Send a log message at level info to the client (if it asked for that level)."""
        self._call.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> None:
        """Send a log message at level warning to the client."""
        self._call.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> None:
        """Send a log message at level error to the client."""
        self._call.log("error", data, logger)
