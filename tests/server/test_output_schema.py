"""Output schemas and structuredContent (issue 11, item 3): a tool returning content
blocks advertises no output schema, and a tool that advertises one always sends
structuredContent, in every revision. The matrix of return annotations x returned values
is `tests/server/output_matrix.py`; the official client's verdict on the same server is
in `tests/interop/test_official_results.py`."""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import jsonschema_rs
import pytest

from mcpgen import InputRequired, Server
from mcpgen._server._arguments import return_schema
from mcpgen_types import latest as t
from tests.server.harness import Client, request
from tests.server.output_matrix import ABSENT, CASES, Case, server
from tests.server.test_tasks import call, run, settle

MODERN = "2026-07-28"
VERSIONS = (MODERN, "2025-11-25", "2025-06-18", "2025-03-26")


def _client(version: str) -> Client:
    client = Client(server)
    if version != MODERN:
        client.initialize(version)
    return client


def _reply(client: Client, version: str, rid: int, method: str, params: Any = None) -> Any:
    reply = client.reply(request(rid, method, params, modern=version == MODERN))
    assert reply is not None and "result" in reply, reply
    return reply["result"]


@functools.cache
def _listed(version: str) -> dict[str, Any]:
    tools = _reply(_client(version), version, 1, "tools/list")["tools"]
    return {tool["name"]: tool for tool in tools}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matrix(version: str, name: str) -> None:
    expected = CASES[name] if version == MODERN else CASES[name].legacy(version)
    schema = _listed(version)[name].get("outputSchema")
    result = _reply(_client(version), version, 2, "tools/call", {"name": name})
    got = Case(
        schema,
        result.get("structuredContent", ABSENT),
        [block["type"] for block in result["content"]],
    )
    assert got == expected
    assert not result.get("isError")
    if schema is not None:
        # What the official clients do with a tool that has an output schema.
        assert "structuredContent" in result
        jsonschema_rs.validate(schema, result["structuredContent"])


def test_the_matrix_covers_every_kind_of_return() -> None:
    with_schema = [c for c in CASES.values() if c.schema is not None]
    blocks = [c for c in CASES.values() if {"image"} <= set(c.content)]
    assert len(CASES) >= 25 and len(with_schema) >= 8 and len(blocks) >= 6


def test_the_text_block_shows_a_structured_string_as_text() -> None:
    result = _reply(_client(MODERN), MODERN, 1, "tools/call", {"name": "number_or_text"})
    assert result["content"] == [{"type": "text", "text": "x"}]
    assert result["structuredContent"] == "x"


@pytest.mark.parametrize(
    "annotation",
    [
        Annotated[list[t.TextContent], "blocks"],
        typing.List,  # noqa: UP006 (the bare typing alias has no item type)
        typing.Sequence,
        Sequence,
        Iterable[t.ContentBlock],
        tuple[t.ImageContent, ...],
        list[str] | t.TextContent,
        list[str | t.AudioContent],
        t.ResourceLink | None,
        t.EmbeddedResource,
        object,
        str | None,
        None,
        InputRequired | dict[str, int],
    ],
)
def test_no_output_schema_for_text_or_content_blocks(annotation: Any) -> None:
    assert return_schema(annotation) is None


INT = {"type": "integer"}
TUPLE = {
    "type": "array",
    "prefixItems": [{"type": "integer"}, {"type": "string"}],
    "items": False,
    "minItems": 2,
    "maxItems": 2,
}


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (
            list[list[int]],
            {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        ),
        (tuple[int, str], TUPLE),
        (dict[str, Any], {"type": "object"}),
        (float, {"type": "number"}),
    ],
)
def test_output_schema_for_structured_values(annotation: Any, schema: dict[str, Any]) -> None:
    assert return_schema(annotation) == schema


def test_a_task_with_an_output_schema_sends_structured_content() -> None:
    tasks = Server("tasks-matrix")

    @tasks.tool(task="optional")
    async def total(values: list[int]) -> int | str:
        return "none" if not values else sum(values)

    @tasks.tool(task="optional", detach=True)
    async def early() -> int | str:
        return "before detaching"

    async def body(c: Client) -> None:
        created = (await call(c, "total", {"values": []}))["result"]
        done = await settle(c, created["taskId"])
        assert done["result"]["structuredContent"] == "none"
        # A detachable task that returns before detaching answers in the request.
        assert (await call(c, "early"))["result"]["structuredContent"] == "before detaching"

    run(tasks, body)
