"""The era bridge: our Client in both eras through a `Proxy` to examples/everything.py
over stdio in both eras (forced), input requests answered across every combination."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpgen import Client, McpError, Proxy
from mcpgen_types import latest as t
from tests.processes import everything_http
from tests.proxy.common import ERAS, UPSTREAM, list_changes, text

# Each (downstream era, upstream era): the quick tier keeps the two crossings, which
# between them speak both eras on each side; the same-era pairs are `slow`.
ERA_PAIRS = [
    (era, upstream) if era != upstream else pytest.param(era, upstream, marks=pytest.mark.slow)
    for upstream in ERAS
    for era in ERAS
]


def _proxy(upstream_era: str, **options: Any) -> Proxy:
    return Proxy(UPSTREAM, upstream_era=upstream_era, input_timeout=30, **options)  # type: ignore[arg-type]


def _run(upstream_era: str, era: str, body: Any, **options: Any) -> Any:
    async def main() -> Any:
        async with Client.memory(_proxy(upstream_era), era=era, **options) as client:
            assert client.era == era
            return await body(client)

    return asyncio.run(main())


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_lists_and_calls_pass_through(upstream_era: str, era: str) -> None:
    async def body(client: Client) -> Any:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"greet", "test_simple_text", "test_elicitation"} <= tools.keys()
        greeting = await client.call_tool("greet", {"name": "Ada"})
        image = await client.call_tool("test_image_content")
        failed = await client.call_tool("test_error_handling")
        prompts = [p.name for p in await client.list_prompts()]
        resources = [r.uri for r in await client.list_resources()]
        static = await client.read_resource(resources[0])
        return tools["greet"], greeting, image, failed, prompts, static

    tool, greeting, image, failed, prompts, static = _run(upstream_era, era, body)
    assert tool.input_schema["properties"]["name"]["type"] == "string"
    assert "Ada" in text(greeting)
    assert isinstance(image.content[0], t.ImageContent)
    assert failed.is_error is True
    assert "test_simple_prompt" in prompts
    assert static.contents


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_an_upstream_elicitation_is_answered_by_the_downstream_client(
    upstream_era: str, era: str
) -> None:
    asked: list[str] = []

    def on_elicitation(params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})

    async def body(client: Client) -> Any:
        return await client.call_tool("test_elicitation", {"message": "Who are you?"})

    result = _run(upstream_era, era, body, on_elicitation=on_elicitation)
    assert asked == ["Who are you?"]
    assert text(result) == (
        'User response: action=accept, content={"username": "ada", "email": "a@b.c"}'
    )


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_multi_round_sampling_and_roots_cross(upstream_era: str, era: str) -> None:
    def on_elicitation(params: t.ElicitRequestParams) -> dict[str, Any]:
        if "name" in params.message:
            return {"action": "accept", "content": {"name": "Ada"}}
        return {"action": "accept", "content": {"color": "green"}}

    def on_sampling(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="Paris"), model="stub"
        )

    async def body(client: Client) -> Any:
        rounds = await client.call_tool("test_input_required_result_multi_round")
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital?"})
        roots = await client.call_tool("test_input_required_result_list_roots")
        return rounds, sampled, roots

    rounds, sampled, roots = _run(
        upstream_era,
        era,
        body,
        on_elicitation=on_elicitation,
        on_sampling=on_sampling,
        on_roots=lambda: ["file:///work"],
    )
    assert "Ada" in text(rounds) and "green" in text(rounds)
    assert text(sampled) == "LLM response: Paris"
    assert text(roots) == "Roots: file:///work"


@pytest.mark.slow
def test_a_continuation_reaching_another_proxy_process_fails_clearly() -> None:
    """The pending upstream call lives in the process that started it: a second proxy
    (same keys, so the requestState opens) has no such call and says so."""
    keys = ["k" * 32]
    call = {"name": "test_input_required_result_elicitation", "arguments": {}}

    async def main() -> None:
        first, second = _proxy("legacy", state_keys=keys), _proxy("legacy", state_keys=keys)
        options: Any = {"era": "modern", "on_elicitation": lambda p: {"action": "cancel"}}
        async with Client.memory(first, **options) as a, Client.memory(second, **options) as b:
            raw = await a.connection.raw_request("tools/call", call)
            assert raw is not None
            round_one = msgspec.json.decode(raw)
            assert round_one["resultType"] == "input_required"
            (key,) = round_one["inputRequests"]
            answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
            retry = {**call, "inputResponses": answer, "requestState": round_one["requestState"]}
            with pytest.raises(McpError, match="another proxy process"):
                await b.connection.raw_request("tools/call", retry)
            done = msgspec.json.decode(await a.connection.raw_request("tools/call", retry) or b"")
            assert done["content"][0]["text"] == "Hello, Ada!"

    asyncio.run(main())


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_upstream_list_changes_reach_downstream_listeners(upstream_era: str, era: str) -> None:
    async def body(client: Client) -> Any:
        # The first request enters the proxy's lifespan (the upstream connection); the
        # memory transport lets a concurrent second one through before it is entered.
        await client.list_tools()
        return await list_changes(client, "test_trigger_tool_change", "test_trigger_prompt_change")

    heard = _run(upstream_era, era, body)
    assert sorted(heard) == [
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
    ]


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_templates_prompts_and_completion_pass_through(upstream_era: str, era: str) -> None:
    async def body(client: Client) -> Any:
        templates = await client.list_resource_templates()
        read = await client.read_resource("test://template/42/data")
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
        completed = await client.complete(ref, "arg1", "testV")
        return templates, read, prompt, completed

    templates, read, prompt, completed = _run(upstream_era, era, body)
    assert completed.completion.values == ["testValue1", "testValue2"]
    assert [x.uri_template for x in templates] == ["test://template/{id}/data"]
    content = read.contents[0]
    assert content.uri == "test://template/42/data"
    assert '"id": "42"' in content.text
    message = prompt.messages[0].content
    assert isinstance(message, t.TextContent)
    assert message.text == "Prompt with arguments: arg1='a', arg2='b'"


def test_template_expansion_round_trips_matched_values() -> None:
    from mcpgen._server._templates import UriTemplate
    from mcpgen.proxy._mirror import expand

    cases = {
        "file:///{+path}": "file:///a/b c.txt",
        "test://{id}/data{?q,page}": "test://x%2Fy/data?q=a%20b&page=2",
        "t://x{/seg}{.ext}": "t://x/one.json",
        "t://{a,b}": "t://1,2",
    }
    for template, uri in cases.items():
        found = UriTemplate(template).match(uri)
        assert found is not None, template
        assert UriTemplate(template).match(expand(template, found)) == found


def test_a_round_without_the_answer_asks_again_and_the_upstream_call_waits() -> None:
    call = {"name": "test_input_required_result_elicitation", "arguments": {}}

    async def main() -> None:
        options: Any = {"era": "modern", "on_elicitation": lambda p: {"action": "cancel"}}
        async with Client.memory(_proxy("legacy"), **options) as client:
            first = msgspec.json.decode(await client.connection.raw_request("tools/call", call))
            state = first["requestState"]
            again = msgspec.json.decode(
                await client.connection.raw_request(
                    "tools/call", {**call, "inputResponses": {}, "requestState": state}
                )
            )
            assert again["resultType"] == "input_required"
            assert again["inputRequests"] == first["inputRequests"]
            (key,) = again["inputRequests"]
            answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
            retry = {**call, "inputResponses": answer, "requestState": again["requestState"]}
            done = msgspec.json.decode(await client.connection.raw_request("tools/call", retry))
            assert done["content"][0]["text"] == "Hello, Ada!"

    asyncio.run(main())


def test_a_legacy_upstream_request_goes_to_the_one_call_still_running() -> None:
    """A call parked waiting for its client's next round is not the asker of a new
    upstream request: the running one is, however many are parked."""
    call = {"name": "test_input_required_result_elicitation", "arguments": {}}

    async def main() -> None:
        options: Any = {"era": "modern", "on_elicitation": lambda p: {"action": "cancel"}}
        async with Client.memory(_proxy("legacy"), **options) as client:
            parked = msgspec.json.decode(await client.connection.raw_request("tools/call", call))
            assert parked["resultType"] == "input_required"
            second = msgspec.json.decode(await client.connection.raw_request("tools/call", call))
            assert second["resultType"] == "input_required"

    asyncio.run(main())


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_upstream_log_messages_reach_the_caller(upstream_era: str, era: str) -> None:
    logged: list[tuple[str, Any]] = []

    async def body(client: Client) -> Any:
        await client.set_log_level("info")
        return await client.call_tool("test_tool_with_logging")

    _run(upstream_era, era, body, on_log=lambda level, data, logger: logged.append((level, data)))
    assert logged
    assert all(level == "info" for level, _ in logged)


@pytest.mark.parametrize(("era", "upstream_era"), ERA_PAIRS)
def test_a_url_upstream_sees_the_callers_input_capabilities(
    upstream_era: str, era: str, tmp_path: Path
) -> None:
    """A client that can sample but not elicit is asked to sample, as the upstream would
    ask it directly; one that declares nothing is asked nothing (a URL upstream: one
    session per combination of input capabilities)."""
    sampled: list[str] = []

    def on_sampling(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        sampled.append("asked")
        return t.CreateMessageResult(role="assistant", content=t.TextContent(text="no"), model="m")

    async def main(url: str) -> tuple[str, str]:
        proxy = Proxy(url, upstream_era=upstream_era)  # type: ignore[arg-type]
        async with (
            Client.memory(proxy, era=era, on_sampling=on_sampling) as sampler,
            Client.memory(proxy, era=era) as plain,
        ):
            first = await sampler.call_tool("test_input_required_result_capabilities")
            second = await plain.call_tool("test_input_required_result_capabilities")
            return text(first), text(second)

    with everything_http(tmp_path / "upstream.log") as url:
        texts = asyncio.run(main(url))
    assert texts == ("capabilities respected", "no input capability declared")
    assert sampled == ["asked"]


@pytest.mark.parametrize("era", ERAS)
def test_a_legacy_upstreams_burst_of_requests_is_one_round(era: str) -> None:
    """everything.py's multiple-inputs tool asks three things at once; a legacy upstream
    sends them as three requests, which reach the client together."""
    rounds: list[int] = []

    def on_elicitation(params: t.ElicitRequestParams) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    def on_sampling(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
        return t.CreateMessageResult(role="assistant", content=t.TextContent(text="x"), model="m")

    async def main() -> None:
        options: Any = {"on_elicitation": on_elicitation, "on_sampling": on_sampling}
        options["on_roots"] = lambda: ["file:///work"]
        async with Client.memory(_proxy("legacy"), era=era, **options) as client:
            call = {"name": "test_input_required_result_multiple_inputs", "arguments": {}}
            if era == "modern":
                raw = await client.connection.raw_request("tools/call", call)
                rounds.append(len(msgspec.json.decode(raw or b"")["inputRequests"]))
            else:  # three real requests, then the result
                result = await client.call_tool(call["name"])
                assert text(result) == "x Ada (1 roots)"
                rounds.append(3)

    asyncio.run(main())
    assert rounds == [3]


def test_a_parked_call_expires_after_input_timeout() -> None:
    call = {"name": "test_input_required_result_elicitation", "arguments": {}}

    async def main() -> None:
        proxy = Proxy(UPSTREAM, upstream_era="legacy", input_timeout=0.2)
        options: Any = {"era": "modern", "on_elicitation": lambda p: {"action": "cancel"}}
        async with Client.memory(proxy, **options) as client:
            first = msgspec.json.decode(await client.connection.raw_request("tools/call", call))
            assert len(proxy.bridge.calls) == 1
            await asyncio.sleep(0.5)
            assert proxy.bridge.calls == {} and proxy.bridge.running == set()
            (key,) = first["inputRequests"]
            answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
            retry = {**call, "inputResponses": answer, "requestState": first["requestState"]}
            with pytest.raises(McpError, match="gone"):
                await client.connection.raw_request("tools/call", retry)

    asyncio.run(main())


@pytest.mark.slow
def test_with_a_shared_bus_a_continuation_reaches_the_process_holding_its_call() -> None:
    """Two proxies on one Redis: the rounds of one call alternate between them, each
    continuation served by whichever holds the upstream call."""
    from tests.stores.redis_server import redis_url

    url, keys = redis_url(), ["k" * 32]
    call = {"name": "test_input_required_result_multi_round", "arguments": {}}
    answers = {"name": {"name": "Ada"}, "color": {"color": "green"}}

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        first = _proxy("legacy", state_keys=keys, redis=url)
        second = _proxy("legacy", state_keys=keys, redis=url)
        options: Any = {"era": "modern", "on_elicitation": lambda p: {"action": "cancel"}}
        async with Client.memory(first, **options) as a, Client.memory(second, **options) as b:
            rounds: list[dict[str, Any]] = []
            params: dict[str, Any] = call
            for client in (a, b, a, b, a, b):
                raw = msgspec.json.decode(
                    await client.connection.raw_request("tools/call", params) or b""
                )
                rounds.append(raw)
                if raw.get("resultType") != "input_required":
                    break
                responses = {}
                for key, request in raw["inputRequests"].items():
                    message = request["params"]["message"]
                    found = next(v for k, v in answers.items() if k in message)
                    responses[key] = {"action": "accept", "content": found}
                params = {**call, "inputResponses": responses, "requestState": raw["requestState"]}
            gone = {**call, "inputResponses": {}, "requestState": rounds[0]["requestState"]}
            with pytest.raises(McpError, match="another proxy process"):
                await b.connection.raw_request("tools/call", gone)  # finished: nobody holds it
            return rounds[0], rounds[-1]

    first_round, last = asyncio.run(main())
    assert first_round["resultType"] == "input_required"
    assert "Ada" in last["content"][0]["text"] and "green" in last["content"][0]["text"]
