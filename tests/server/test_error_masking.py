"""What a client learns of a handler's failure (issue 22; issue 24 item 11).

By default an unexpected exception reaches the client as a generic message with a
reference, and the log has its traceback under the same reference; `mask_errors=False`
opts into the details. `ToolError` and `McpError` go through as written."""

from __future__ import annotations

import asyncio
import logging
import re

import msgspec
import pytest

from mcpgen import Client, McpError, Server, ToolError
from mcpgen_types import latest as t

SECRET = "db password is hunter2"
ERAS = ["modern", "legacy"]


class Conversion(msgspec.Struct):
    celsius: float
    fahrenheit: float


def build(**options: bool) -> Server:
    server = Server("errors", **options)

    @server.tool
    def leaky() -> str:
        raise ValueError(SECRET)

    @server.tool
    async def leaky_async() -> str:
        raise ValueError(SECRET)

    @server.tool
    def convert(celsius: float) -> Conversion:
        if celsius < -273.15:
            raise ToolError("below absolute zero: nothing is that cold")
        return Conversion(celsius=celsius, fahrenheit=celsius * 9 / 5 + 32)

    @server.tool
    async def convert_async(celsius: float) -> Conversion:
        raise ToolError("not today")

    @server.tool
    def refuse() -> str:
        raise McpError(-32602, "order ids are positive", {"order": -1})

    @server.resource("data://leaky")
    def data() -> str:
        raise RuntimeError(SECRET)

    @server.tool(task="optional")
    async def leaky_task() -> str:
        raise ValueError(SECRET)

    return server


REF = re.compile(r"\(ref ([0-9a-f]{8})\)")


def refs_in_log(caplog: pytest.LogCaptureFixture) -> dict[str, logging.LogRecord]:
    found = {}
    for record in caplog.records:
        match = REF.search(record.getMessage())
        if record.name == "mcpgen.server" and match:
            found[match.group(1)] = record
    return found


@pytest.mark.parametrize("era", ERAS)
def test_by_default_a_handler_exception_is_a_reference_not_its_text(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> list[str]:
        async with Client.memory(build(), era=era) as client:  # type: ignore[arg-type]
            said = []
            for name in ("leaky", "leaky_async"):
                result = await client.call_tool(name)
                assert result.is_error
                said.append(result.content[0].text)  # type: ignore[union-attr]
            with pytest.raises(McpError) as failed:
                await client.read_resource("data://leaky")
            assert failed.value.code == -32603
            said.append(failed.value.message)
            return said

    with caplog.at_level(logging.ERROR, logger="mcpgen.server"):
        said = asyncio.run(main())
    logged = refs_in_log(caplog)
    for text in said:
        assert SECRET not in text and "ValueError" not in text and "RuntimeError" not in text
        match = REF.search(text)
        assert match is not None, text
        record = logged[match.group(1)]  # the operator finds the traceback by the reference
        assert record.exc_info is not None and SECRET in str(record.exc_info[1])
    assert said[0].startswith("Tool 'leaky' failed (ref ")
    assert said[2].startswith("internal error (ref ")


def test_a_tasks_failure_is_masked_too() -> None:
    async def main() -> str:
        async with Client.memory(build(), era="modern") as client:
            handle = await client.call_tool("leaky_task", task=True)
            result = await handle.result()  # type: ignore[union-attr]
            return str(result.content[0].text)  # type: ignore[union-attr]

    text = asyncio.run(main())
    assert SECRET not in text and REF.search(text) is not None


@pytest.mark.parametrize("era", ERAS)
def test_mask_errors_false_opts_into_the_details(era: str) -> None:
    async def main() -> tuple[str, str]:
        async with Client.memory(build(mask_errors=False), era=era) as client:  # type: ignore[arg-type]
            result = await client.call_tool("leaky")
            with pytest.raises(McpError) as failed:
                await client.read_resource("data://leaky")
            return result.content[0].text, failed.value.message  # type: ignore[union-attr]

    tool, read = asyncio.run(main())
    assert tool == f"Tool 'leaky' failed: ValueError: {SECRET}"
    assert read == f"internal error: RuntimeError: {SECRET}"


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("masked", [True, False])
def test_a_raised_tool_error_is_the_result_as_written_without_a_traceback(
    era: str, masked: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 24 item 11: `raise ToolError("msg")` in a typed tool (`-> Conversion`)."""

    async def main() -> tuple[t.CallToolResult, t.CallToolResult, t.CallToolResult, t.Tool]:
        async with Client.memory(build(mask_errors=masked), era=era) as client:  # type: ignore[arg-type]
            cold = await client.call_tool("convert", {"celsius": -300})
            warm = await client.call_tool("convert", {"celsius": 100})
            later = await client.call_tool("convert_async", {"celsius": 1})
            tools = {tool.name: tool for tool in await client.list_tools()}
            return cold, warm, later, tools["convert"]

    with caplog.at_level(logging.DEBUG, logger="mcpgen.server"):
        cold, warm, later, tool = asyncio.run(main())
    assert cold.is_error is True
    assert [block.text for block in cold.content] == [  # type: ignore[union-attr]
        "below absolute zero: nothing is that cold"
    ]
    assert later.is_error is True and later.content[0].text == "not today"  # type: ignore[union-attr]
    assert warm.structured_content == {"celsius": 100, "fahrenheit": 212}
    assert tool.output_schema is not msgspec.UNSET  # the declared output schema is kept
    assert "celsius" in tool.output_schema["properties"]  # type: ignore[index]
    assert not [r for r in caplog.records if r.name == "mcpgen.server" and r.exc_info]


def test_mcp_errors_go_through_as_written_when_masked() -> None:
    async def main() -> McpError:
        async with Client.memory(build()) as client:
            with pytest.raises(McpError) as failed:
                await client.call_tool("refuse")
            return failed.value

    error = asyncio.run(main())
    assert (error.code, error.message, error.data) == (
        -32602,
        "order ids are positive",
        {"order": -1},
    )


def test_tool_error_keeps_its_client_form() -> None:
    """The typed clients' form (`ToolError(name, result)`) is unchanged."""
    result = t.CallToolResult(content=[t.TextContent(text="no luck")], is_error=True)
    raised = ToolError("fail", result)
    assert str(raised) == "tool 'fail' failed: no luck"
    assert raised.name == "fail" and raised.result is result
    plain = ToolError("just this")
    assert str(plain) == plain.message == "just this" and plain.result is None
