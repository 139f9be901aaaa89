"""Await-style input requests (issue 11, item 8): `await ctx.elicit(...)`,
`ctx.elicit_url`, `ctx.sample` and `ctx.list_roots`, answered by our client's callbacks
over memory, stdio and Streamable HTTP in both eras.

A legacy session sends real server-to-client requests and the handler runs once; a
modern request replays the handler, one round per await (code before the first await
runs once per round); a task waits in input_required and replays the same way.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen import Client, McpError, ToolTask
from mcpgen._server import Pending
from mcpgen_types import latest as t
from tests.conftest import REPO
from tests.server.await_server import build
from tests.server.harness import Client as Raw
from tests.server.harness import notification, request
from tests.transports.httpharness import serve

STDIO = [sys.executable, "-m", "tests.server.await_server"]
ERAS = ("modern", "legacy")


class Answers:
    """The client's callbacks: they answer in turn and record what they were asked."""

    def __init__(self, *forms: dict[str, Any], action: str = "accept") -> None:
        self.forms = list(forms)
        self.action = action
        self.asked: list[str] = []

    def elicit(self, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.asked.append(params.message)
        if self.action != "accept":
            return t.ElicitResult(action=self.action)  # type: ignore[arg-type]
        if params.mode == "url":
            return t.ElicitResult(action="accept")
        return t.ElicitResult(action="accept", content=self.forms.pop(0))

    def sample(self, params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        assert params.system_prompt == "Be brief" and params.max_tokens == 20
        self.asked.append("sampling")
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="hi there"), model="test-model"
        )

    def roots(self) -> list[str]:
        self.asked.append("roots")
        return ["file:///home/ada", "file:///srv"]

    def options(self, era: str, **extra: Any) -> dict[str, Any]:
        return {
            "era": era,
            "timeout": 15,
            "on_elicitation": self.elicit,
            "on_sampling": self.sample,
            "on_roots": self.roots,
            "elicitation_modes": ("form", "url"),
        } | extra


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def text(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent), result
    return block.text


def connect(link: str, url: str | None, **options: Any) -> Client:
    if link == "memory":
        return Client.memory(build(), **options)
    if link == "stdio":
        return Client.stdio(STDIO, cwd=str(REPO), **options)
    assert url is not None
    if link == "sse":  # the deprecated HTTP+SSE transport: legacy only
        return Client.sse(url.removesuffix("/mcp") + "/sse", **options)
    return Client.http(url, **options)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serve(build().asgi_app()) as (url, _):
        yield url


LINKS = [(link, era) for link in ("memory", "stdio", "http") for era in ERAS] + [("sse", "legacy")]


@pytest.mark.parametrize(("link", "era"), LINKS)
def test_two_awaits_in_a_row(link: str, era: str, request: pytest.FixtureRequest) -> None:
    """Modern: three rounds, so the code before the first await ran three times;
    legacy: real requests, one run. Each question reaches the user once either way."""
    url = request.getfixturevalue("http_url") if link in ("http", "sse") else None
    answers = Answers({"name": "Ada"}, {"age": 36})
    tag = f"two-{link}-{era}"

    async def main() -> str:
        async with connect(link, url, **answers.options(era)) as c:
            return text(await c.call_tool("two_questions", {"tag": tag}))

    runs = 3 if era == "modern" else 1
    assert run(main()) == f"Ada is 36; runs={runs}"
    assert answers.asked == ["Your name?", "Your age?"]


@pytest.mark.parametrize(("link", "era"), LINKS)
def test_elicit_sample_and_roots(link: str, era: str, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url") if link in ("http", "sse") else None
    answers = Answers({"name": "Ada"})
    tag = f"kinds-{link}-{era}"

    async def main() -> tuple[str, str]:
        async with connect(link, url, **answers.options(era)) as c:
            kinds = text(await c.call_tool("all_kinds", {"tag": tag}))
            url_answer = text(await c.call_tool("sign_in"))
            return kinds, url_answer

    kinds, url_answer = run(main())
    runs = 4 if era == "modern" else 1
    assert kinds == (
        "accept {'name': 'Ada'}; model: hi there; "
        f"roots: file:///home/ada,file:///srv; runs={runs}"
    )
    assert url_answer == "url: accept"
    assert answers.asked == ["Your name?", "sampling", "roots", "Sign in, please"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_elicitation_is_an_answer(era: str, action: str) -> None:
    answers = Answers(action=action)

    async def main() -> str:
        async with Client.memory(build(), **answers.options(era)) as c:
            return text(await c.call_tool("confirm"))

    assert run(main()) == f"action={action} content=UNSET"


@pytest.mark.parametrize("era", ERAS)
def test_a_client_that_cannot_elicit(era: str) -> None:
    """The await raises McpError at once (no request, no hang): a handler can catch it,
    and uncaught it fails the call with that error."""

    async def main() -> None:
        async with Client.memory(build(), era=era, timeout=5) as c:  # no callbacks
            caught = text(await c.call_tool("careful"))
            code = -32021 if era == "modern" else -32602
            assert caught == f"cannot ask ({code})"
            with pytest.raises(McpError) as failed:
                await c.call_tool("careless")
            assert failed.value.code == code
            assert "elicitation" in failed.value.message

    run(main())


def test_a_prompt_awaits_input() -> None:
    async def main() -> None:
        for era in ERAS:
            answers = Answers({"name": "Grace"})
            async with Client.memory(build(), **answers.options(era)) as c:
                result = await c.get_prompt("greeting")
                content = result.messages[0].content
                assert isinstance(content, t.TextContent)
                assert content.text == "Hello, Grace!"

    run(main())


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("tool", ["awaits_then_returns", "returns_then_awaits"])
def test_one_call_uses_one_style(era: str, tool: str) -> None:
    """Awaiting and returning InputRequired in one call fails it with a clear error."""
    answers = Answers({"name": "Ada"} if tool == "awaits_then_returns" else {"age": 3})

    async def main() -> None:
        async with Client.memory(build(), **answers.options(era)) as c:
            with pytest.raises(McpError, match=r"either awaits input .* or returns InputRequired"):
                await c.call_tool(tool, {})

    run(main())
    # A modern retry may carry answers the awaits never asked for; they are ignored (as
    # unexpected extra answers must be), so there the mixing shows one round later.
    late = era == "modern" and tool == "returns_then_awaits"
    assert len(answers.asked) == (2 if late else 1)


def test_a_task_waits_for_its_awaited_input() -> None:
    """The task moves to input_required with the await's request; each answer (by the
    client's callback, through tasks/update) runs the handler again from the top."""
    answers = Answers({"name": "Ada"}, {"age": 36})

    async def main() -> None:
        async with Client.memory(build(), **answers.options("modern")) as c:
            handle = await c.call_tool("in_a_task", {"tag": "task"}, task=True)
            assert isinstance(handle, ToolTask)
            result = await handle.result(timeout=10)
            assert text(result) == "task=True Ada 36; runs=3"

    run(main())
    assert answers.asked == ["Your name?", "Your age?"]


@pytest.mark.parametrize("era", ERAS)
def test_a_detaching_handler_awaits_before_and_after(era: str) -> None:
    """Modern: one request round before the detach, then a task round after it (three
    runs); legacy: no tasks, real requests, one run."""
    answers = Answers({"name": "Ada"}, {"age": 36})

    async def main() -> str:
        async with Client.memory(build(), **answers.options(era)) as c:
            handle = await c.call_tool("staged", {"tag": f"staged-{era}"}, task=True)
            if isinstance(handle, ToolTask):
                return text(await handle.result(timeout=10))
            return text(handle)

    expected = "task=True Ada 36; runs=3" if era == "modern" else "task=False Ada 36; runs=1"
    assert run(main()) == expected
    assert answers.asked == ["Your name?", "Your age?"]


def test_a_task_answered_by_hand_shows_the_await_key() -> None:
    async def main() -> None:
        async with Client.memory(build(), on_elicitation=Answers().elicit) as c:
            handle = await c.call_tool("in_a_task", {"tag": "by-hand"}, task=True)
            assert isinstance(handle, ToolTask)
            status: Any = None
            for _ in range(200):
                status = await handle.get()
                if handle.status == "input_required":
                    break
                await asyncio.sleep(0.01)
            assert list(status.input_requests) == ["await.0"]
            assert status.input_requests["await.0"].params.message == "Your name?"
            await handle.update({"await.0": t.ElicitResult(action="accept", content={"name": "X"})})
            for _ in range(200):
                status = await handle.get()
                if handle.status == "input_required" and "await.1" in status.input_requests:
                    break
                await asyncio.sleep(0.01)
            assert list(status.input_requests) == ["await.1"]
            await handle.update({"await.1": t.ElicitResult(action="accept", content={"age": 7})})
            assert text(await handle.result(timeout=10)) == "task=True X 7; runs=3"

    run(main())


@pytest.mark.parametrize("link", ["memory", "stdio", "http"])
def test_cancelling_a_legacy_call_cancels_its_await(
    link: str, request: pytest.FixtureRequest
) -> None:
    """The client gives up on the call (its notifications/cancelled): the handler's
    await is cancelled where it waits, and the session serves on."""
    url = request.getfixturevalue("http_url") if link == "http" else None
    asked = asyncio.Event()

    async def never(params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    tag = f"cancel-{link}"

    async def main() -> str:
        async with connect(link, url, era="legacy", timeout=15, on_elicitation=never) as c:
            call = asyncio.ensure_future(c.call_tool("waits", {"tag": tag}))
            await asyncio.wait_for(asked.wait(), 10)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            for _ in range(100):
                seen = await c.call_tool("cancelled")
                if tag in text(seen):
                    return text(seen)
                await asyncio.sleep(0.02)
            return text(seen)

    assert tag in run(main())


# -- the wire, without a client ------------------------------------------------------------------
def call(rid: int, tool: str, arguments: dict[str, Any], **params: Any) -> bytes:
    return request(rid, "tools/call", {"name": tool, "arguments": arguments, **params}, caps=CAPS)


CAPS = {"elicitation": {}}


def test_modern_rounds_carry_earlier_answers_in_the_sealed_state() -> None:
    """The client resends only the latest answer; the earlier ones come back from
    requestState. Each round asks for exactly one input request, keyed by position."""
    raw = Raw(build())
    first = raw.reply(call(1, "two_questions", {"tag": "wire"}))
    assert first is not None
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["await.0"]
    name = {"action": "accept", "content": {"name": "Lin"}}
    second = raw.reply(
        call(2, "two_questions", {"tag": "wire"},
             inputResponses={"await.0": name}, requestState=result["requestState"])
    )  # fmt: skip
    assert second is not None
    result = second["result"]
    assert list(result["inputRequests"]) == ["await.1"]
    assert result["inputRequests"]["await.1"]["params"]["message"] == "Your age?"
    body = result["requestState"].split(".")[2]
    sealed = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert sealed[-1]["s"] == {"mcpgen/awaits": {"await.0": ["elicitation/create", name]}}
    third = raw.reply(
        call(3, "two_questions", {"tag": "wire"},
             inputResponses={"await.1": {"action": "accept", "content": {"age": 9}}},
             requestState=result["requestState"])
    )  # fmt: skip
    assert third is not None
    assert third["result"]["content"][0]["text"] == "Lin is 9; runs=3"


def test_modern_extra_answers_are_ignored() -> None:
    """Answers under keys nobody asked for (and no requestState) do not disturb the
    awaits: the first one still asks for its input."""
    raw = Raw(build())
    stray = {"action": "accept", "content": {"name": "Eve"}}
    first = raw.reply(call(1, "two_questions", {"tag": "stray"}, inputResponses={"x": stray}))
    assert first is not None
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["await.0"]


def test_modern_state_from_another_request_is_refused() -> None:
    raw = Raw(build())
    first = raw.reply(call(1, "two_questions", {"tag": "other"}))
    assert first is not None
    token = first["result"]["requestState"]
    other = raw.reply(
        call(2, "two_questions", {"tag": "different"},
             inputResponses={"await.0": {"action": "accept", "content": {"name": "X"}}},
             requestState=token)
    )  # fmt: skip
    assert other is not None
    assert other["error"]["code"] == -32602


def legacy_raw() -> Raw:
    raw = Raw(build())
    raw.initialize(caps={"elicitation": {}})
    return raw


def legacy_call(rid: int, tool: str, arguments: dict[str, Any]) -> bytes:
    return request(rid, "tools/call", {"name": tool, "arguments": arguments}, modern=False)


async def settle_tasks(raw: Raw) -> None:
    await asyncio.sleep(0)
    while raw.channel.tasks:
        await raw.channel.tasks.pop()


def test_legacy_cancellation_cancels_the_await_and_the_request() -> None:
    """notifications/cancelled of the call stops the handler where it waits, tells the
    client to drop the elicitation it was asked, and no reply is sent."""
    raw = legacy_raw()

    async def main() -> None:
        out = raw.send(legacy_call(7, "waits", {}))
        assert isinstance(out, Pending)
        work = asyncio.ensure_future(out.coro)
        out.call.cancel_hook = work.cancel  # what `deliver` binds
        await asyncio.sleep(0.01)
        (asked,) = raw.channel.take("request")
        assert asked["method"] == "elicitation/create" and asked["params"]["message"] == "Anyone?"
        assert raw.send(notification("notifications/cancelled", {"requestId": 7})) is None
        assert await asyncio.wait_for(asyncio.gather(work, return_exceptions=True), 5) == [None]
        (cancelled,) = raw.channel.take("notify")
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"]["requestId"] == asked["id"]
        assert raw.channel.take("reply") == []
        # A late answer to the dropped request is ignored.
        late = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}}
        assert raw.send(json.dumps(late).encode()) is None
        assert raw.session.bridge is not None and not raw.session.bridge.awaited

    asyncio.run(main())


def test_legacy_timeout_raises_in_the_handler() -> None:
    raw = legacy_raw()

    async def main() -> None:
        reply = await asyncio.wait_for(raw.areply(legacy_call(8, "waits", {"seconds": 0.05})), 5)
        assert reply["result"]["content"][0]["text"] == (
            "timed out: the client did not answer elicitation/create within 0.05 s"
        )
        (asked,) = raw.channel.take("request")
        (cancelled,) = raw.channel.take("notify")
        assert cancelled["params"] == {"requestId": asked["id"], "reason": "timed out"}

    asyncio.run(main())


def test_legacy_error_answer_raises_in_the_handler() -> None:
    raw = legacy_raw()

    async def main() -> None:
        out = raw.send(legacy_call(9, "careless", {}))
        assert isinstance(out, Pending)
        work = asyncio.ensure_future(out.coro)
        await asyncio.sleep(0.01)
        (asked,) = raw.channel.take("request")
        refusal = {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "no"}}
        assert raw.send(json.dumps(refusal).encode()) is None
        reply = json.loads(await asyncio.wait_for(work, 5))
        assert reply["error"] == {
            "code": -32603,
            "message": "the client did not answer elicitation/create: -1: no",
            "data": {"code": -1, "message": "no"},
        }

    asyncio.run(main())


# -- the guide -----------------------------------------------------------------------------------
GUIDE = REPO / "docs" / "guide" / "input-requests.md"


def test_the_guides_examples_run_as_written() -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    outputs = []
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs == [
        "modern 2 seat(s) for Ada: Sun, sea, and no meetings.\n"
        "legacy 2 seat(s) for Ada: Sun, sea, and no meetings.\n",
        "modern accept: /tmp/old.txt\nlegacy accept: /tmp/old.txt\n",
    ]
