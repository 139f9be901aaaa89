"""`Server.add_transformed_tool`: a new tool from an existing one (name, description,
renamed and re-described arguments, hidden arguments with fixed values, a wrapped
result), with regenerated schemas, checked by real calls in both eras."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import msgspec
import pytest

from mcpgen import Client, ConfigurationError, Context, InputRequired, Server, elicit_form
from mcpgen import types as t
from tests.framework.common import ERAS, run


class Hit(msgspec.Struct):
    title: str
    score: float


class Page(msgspec.Struct):
    query: str
    hits: list[Hit]
    total: int


def build() -> Server:
    server = Server("search")

    @server.tool
    def search(
        q: Annotated[str, msgspec.Meta(description="what to look for")],
        index: str,
        limit: int = 10,
    ) -> Page:
        """Search an index."""
        hits = [Hit(title=f"{index}:{q}:{i}", score=1.0 / (i + 1)) for i in range(limit)]
        return Page(query=q, hits=hits, total=limit)

    @server.tool
    async def greet(ctx: Context, name: str, polite: bool = False) -> Any:
        answer = ctx.input("ok")
        if answer is None:
            return InputRequired({"ok": elicit_form("Greet?", {"type": "object"})})
        return f"{'Dear ' if polite else ''}{name} ({answer.action})"

    def titles(page: Page) -> list[str]:
        return [hit.title for hit in page.hits]

    server.add_transformed_tool(
        "search",
        "search_docs",
        description="Search the documentation.",
        rename={"q": "query"},
        describe={"limit": "how many hits (at most)"},
        hide={"index": "docs"},
        result=titles,
    )

    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    server.add_transformed_tool(
        "greet", "greet_politely", rename={"name": "who"}, hide={"polite": True}, result=shout
    )
    return server


async def accept(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={})


def test_schemas_are_regenerated() -> None:
    async def main() -> None:
        async with Client.memory(build()) as client:
            tools = {x.name: x for x in await client.list_tools()}
            assert set(tools) == {"search", "search_docs", "greet", "greet_politely"}
            docs = tools["search_docs"]
            assert docs.description == "Search the documentation."
            props = docs.input_schema["properties"]
            assert set(props) == {"query", "limit"}  # `index` hidden, `q` renamed
            assert props["query"]["description"] == "what to look for"
            assert props["limit"]["description"] == "how many hits (at most)"
            assert docs.input_schema["required"] == ["query"]
            # the output schema comes from the wrapping function: a list of strings
            assert docs.output_schema == {"type": "array", "items": {"type": "string"}}
            # the source is unchanged
            assert set(tools["search"].input_schema["properties"]) == {"q", "index", "limit"}
            assert set(tools["search"].output_schema["properties"]) == {"query", "hits", "total"}
            assert set(tools["greet_politely"].input_schema["properties"]) == {"who"}

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_calls_map_arguments_fix_hidden_ones_and_wrap_results(era: str) -> None:
    async def main() -> None:
        async with Client.memory(build(), era=era, on_elicitation=accept) as client:
            result = await client.call_tool("search_docs", {"query": "mount", "limit": 2})
            assert not result.is_error
            assert json.loads(result.content[0].text) == ["docs:mount:0", "docs:mount:1"]
            # a caller cannot override a hidden argument
            result = await client.call_tool(
                "search_docs", {"query": "x", "limit": 1, "index": "secrets"}
            )
            assert json.loads(result.content[0].text) == ["docs:x:0"]
            # bad arguments are reported in the new tool's names
            bad = await client.call_tool("search_docs", {"query": 3})
            assert bad.is_error
            assert "$.query" in bad.content[0].text
            missing = await client.call_tool("search_docs", {})
            assert missing.is_error and "query" in missing.content[0].text
            # an input round of the source passes through the wrapper
            greeting = await client.call_tool("greet_politely", {"who": "Ada"})
            assert greeting.content[0].text == "DEAR ADA (ACCEPT)"

    run(main())


def test_replace_and_mistakes() -> None:
    server = build()
    server.add_transformed_tool("search", "find", replace=True, rename={"q": "text"})
    assert "search" not in server._registry.tools
    with pytest.raises(ConfigurationError, match="no tool"):
        server.add_transformed_tool("nope", "x")
    with pytest.raises(ConfigurationError, match="no argument"):
        server.add_transformed_tool("find", "y", rename={"missing": "z"})
    with pytest.raises(ConfigurationError, match="exists already"):
        server.add_transformed_tool("find", "y", rename={"text": "index"})
    with pytest.raises(ConfigurationError, match="registered twice"):
        server.add_transformed_tool("find", "search_docs")
    with pytest.raises(ConfigurationError, match="tool name"):
        server.add_transformed_tool("find", "bad name")

    async def main() -> None:
        async with Client.memory(server) as client:
            result = await client.call_tool("find", {"text": "a", "index": "i", "limit": 1})
            assert result.structured_content["hits"][0]["title"] == "i:a:0"

    run(main())
