"""Aggregation: two upstreams (examples/everything.py, one forced legacy, one modern)
mounted under prefixes in one `Proxy`, reached by our Client in both eras."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcpgen import Client, ConfigurationError, McpError, Proxy
from mcpgen_types import latest as t
from tests.proxy.common import ERAS, UPSTREAM, list_changes, text


def _proxy() -> Proxy:
    return Proxy(
        {"old": UPSTREAM, "new": UPSTREAM},
        upstream_era={"old": "legacy", "new": "modern"},
        input_timeout=30,
    )


@pytest.mark.parametrize("era", ERAS)
def test_two_upstreams_under_prefixes(era: str, caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []

    def on_elicitation(params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})

    async def main() -> Any:
        proxy = _proxy()
        async with Client.memory(proxy, era=era, on_elicitation=on_elicitation) as client:
            tools = {tool.name for tool in await client.list_tools()}
            assert [m.upstream.era for m in proxy.mounts] == ["legacy", "modern"]
            old = await client.call_tool("old_greet", {"name": "Ada"})
            new = await client.call_tool("new_greet", {"name": "Bob"})
            elicited = [
                await client.call_tool(f"{p}_test_elicitation", {"message": f"{p}?"})
                for p in ("old", "new")
            ]
            prompts = {p.name for p in await client.list_prompts()}
            prompt = await client.get_prompt(
                "new_test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            done = await client.complete(
                {"type": "ref/prompt", "name": "old_test_prompt_with_arguments"}, "arg1", "test"
            )
            ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
            with pytest.raises(McpError, match="unknown prompt"):
                await client.complete(ref, "arg1", "test")
            resources = [r.uri for r in await client.list_resources()]
            read = await client.read_resource(resources[0])
            templated = await client.read_resource("test://template/7/data")
            with pytest.raises(McpError):
                await client.call_tool("greet", {"name": "Ada"})
            return (
                tools,
                old,
                new,
                elicited,
                prompts,
                prompt,
                done,
                resources,
                read,
                templated,
            )

    with caplog.at_level(logging.WARNING, logger="mcpgen.proxy"):
        tools, old, new, elicited, prompts, prompt, done, resources, read, templated = asyncio.run(
            main()
        )
    assert {"old_greet", "new_greet", "old_test_elicitation", "new_test_elicitation"} <= tools
    assert "greet" not in tools
    assert "Ada" in text(old) and "Bob" in text(new)
    assert asked == ["old?", "new?"]
    assert all("ada" in text(r) for r in elicited)
    assert {"old_test_simple_prompt", "new_test_simple_prompt"} <= prompts
    assert prompt.messages
    assert done.completion.values == ["testValue1", "testValue2", "test"]
    # both upstreams list the same URIs: served once, by the first, the collision logged
    assert len(resources) == len(set(resources))
    assert read.contents and templated.contents
    assert "already served by another upstream" in caplog.text


@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
def test_a_list_change_of_either_upstream_reaches_the_client(era: str) -> None:
    async def main() -> list[str]:
        async with Client.memory(_proxy(), era=era) as client:
            changes = ("old_test_trigger_tool_change", "new_test_trigger_prompt_change")
            heard = await list_changes(client, *changes)
            assert {"old_greet", "new_greet"} <= {x.name for x in await client.list_tools()}
        return heard

    assert sorted(asyncio.run(main())) == [
        "notifications/prompts/list_changed",
        "notifications/tools/list_changed",
    ]


@pytest.mark.parametrize(
    "upstreams", [{}, {"a_b": UPSTREAM, "c": UPSTREAM}, {"a": UPSTREAM, "": UPSTREAM}]
)
def test_prefixes_are_checked(upstreams: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="prefixes"):
        Proxy(upstreams)


def test_a_mapping_of_one_upstream_is_prefixed_too() -> None:
    async def main() -> set[str]:
        async with Client.memory(Proxy({"one": UPSTREAM})) as client:
            return {tool.name for tool in await client.list_tools()}

    names = asyncio.run(main())
    assert "one_greet" in names and "greet" not in names
