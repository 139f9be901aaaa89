"""What third-party servers' schemas broke in `mcpgen stubs` (issue 24): required
arguments whose names are no identifiers, unions msgspec cannot decode, the `noqa`
header under ruff's defaults, method and argument names, client capabilities."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpgen import Client, Server
from mcpgen.stubs import ToolSpec, generate, render
from tests.stubs.test_stubs import load
from tests.typecheck import shared_cache


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _module(tmp_path: Path, tools: list[ToolSpec], name: str = "tools_mod") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(render(tools, {"name": "third-party"}, path))
    return path


def _mypy(directory: Path, *modules: str) -> str:
    argv = [sys.executable, "-m", "mypy", "--strict", *shared_cache(directory), *modules]
    done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, check=False)
    return done.stdout


@pytest.mark.slow
def test_required_arguments_named_unlike_identifiers_stay_required(tmp_path: Path) -> None:
    """`item-id`, `from` and `_hidden` are required: leaving one out is a mypy error."""
    schema = _object(
        {"item-id": {"type": "string"}, "from": {"type": "integer"}, "_hidden": {"type": "string"}},
        "item-id",
        "from",
        "_hidden",
    )
    path = _module(tmp_path, [ToolSpec("get-item", "", schema, None)])
    text = path.read_text()
    assert "item_id: str," in text and "from_: int," in text, text
    (tmp_path / "use.py").write_text(
        "from mcpgen import Client\nfrom tools_mod import Tools\n\n\n"
        "async def use(client: Client) -> None:\n"
        "    await Tools(client).get_item()\n"
    )
    said = _mypy(tmp_path, "use.py")
    assert 'Missing named argument "item_id"' in said, said
    assert 'Missing named argument "from_"' in said, said


_TEXT = _object({"type": {"type": "string", "const": "text"}, "text": {"type": "string"}}, "type")
_IMAGE = _object(
    {"type": {"const": "image"}, "data": {"type": "string"}, "mimeType": {"type": "string"}},
    "type",
    "data",
)
MEDIA_OUTPUT = _object(
    {
        "content": {"type": "array", "items": {"anyOf": [_TEXT, _IMAGE]}},
        "either": {
            "anyOf": [
                _object({"a": {"type": "string"}}, "a"),
                _object({"b": {"type": "integer"}}, "b"),
            ]
        },
        "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string"}]},
    },
    "content",
)


@pytest.mark.slow
def test_every_generated_type_decodes(tmp_path: Path) -> None:
    """Structs told apart by a constant property become tagged structs msgspec decodes;
    a union it cannot decode falls back to `Any`; the module passes mypy --strict."""
    path = _module(tmp_path, [ToolSpec("read_media_file", "", {"type": "object"}, MEDIA_OUTPUT)])
    assert _mypy(tmp_path, path.name).startswith("Success"), path.read_text()
    module = load(path)
    try:
        wire = {
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
            ],
            "either": {"b": 2},
            "when": "2026-01-01T00:00:00Z",
        }
        out = msgspec.convert(wire, module.ReadMediaFileOutput)
        text, image = out.content
        assert text.text == "hi" and image.data == "AA=="
        assert type(text).__name__ != type(image).__name__
        assert out.either == {"b": 2} and out.when == "2026-01-01T00:00:00Z"
        for value in vars(module).values():  # and every other struct has a decoder
            if isinstance(value, type) and issubclass(value, msgspec.Struct):
                msgspec.json.Decoder(value)
    finally:
        sys.modules.pop(path.stem, None)


def test_exact_names_win_and_arguments_get_python_names(tmp_path: Path) -> None:
    """The tool named exactly `get_item` gets `get_item` wherever it is listed; a camelCase
    argument is a snake_case parameter sent under its wire name."""
    server = Server("names")
    schema = _object({"dryRun": {"type": "boolean"}, "HTTPSProxy": {"type": "string"}}, "dryRun")

    @server.tool(name="get-item", input_schema=schema)
    def hyphenated(**arguments: Any) -> str:
        return json.dumps(arguments, sort_keys=True)

    @server.tool(name="get_item", input_schema={"type": "object"})
    def exact() -> str:
        return "exact"

    @server.tool(name="getItem", input_schema={"type": "object"})
    def camel() -> str:
        return "camel"

    async def main() -> None:
        async with Client.memory(server) as client:
            path = tmp_path / "names_mod.py"
            path.write_text(await generate(client, path))
            module = load(path)
            try:
                tools = module.Tools(client)
                assert (await tools.get_item()).content[0].text == "exact"
                assert (await tools.get_item_3()).content[0].text == "camel"
                sent = await tools.get_item_2(dry_run=True, https_proxy="p")
                assert json.loads(sent.content[0].text) == {"HTTPSProxy": "p", "dryRun": True}
            finally:
                sys.modules.pop(path.stem, None)

    asyncio.run(main())
    assert "dry_run: bool," in (tmp_path / "names_mod.py").read_text()


def _ruff_check(directory: Path, module: str) -> str:
    argv = [sys.executable, "-m", "ruff", "check", "--no-cache", module]
    done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else done.stdout + done.stderr


def test_ruff_without_configuration(tmp_path: Path) -> None:
    """A description longer than a line: in a directory without ruff configuration the
    module passes a plain `ruff check` (no `noqa: E501` header RUF100 flags); where the
    configuration checks line length, the header is there and the module passes too."""
    schema = _object({"a": {"type": "string", "description": "a long description " * 12}})
    tools = [ToolSpec("long", "x " * 100, schema, None)]
    plain = _module(tmp_path, tools)
    assert not plain.read_text().startswith("# ruff: noqa"), plain.read_text()[:200]
    assert _ruff_check(tmp_path, plain.name) == ""
    strict = tmp_path / "strict"
    strict.mkdir()
    (strict / "ruff.toml").write_text('[lint]\nextend-select = ["E501", "RUF100"]\n')
    checked = _module(strict, tools)
    assert checked.read_text().startswith("# ruff: noqa: E501")
    assert _ruff_check(strict, checked.name) == ""


class Reading(msgspec.Struct):
    celsius: float


@pytest.mark.slow
def test_non_object_results_unwrapped_in_every_era(tmp_path: Path) -> None:
    """A tool returning a list or a number: a 2025-11-25 session carries it wrapped as
    {"result": ...}; the client unwraps the schema and the value, so the stubs written
    from either era are the same and return the list and the number."""
    server = Server("readings")

    @server.tool
    def readings(count: int) -> list[Reading]:
        return [Reading(celsius=20.5 + i) for i in range(count)]

    @server.tool
    def total() -> int:
        return 7

    async def main() -> None:
        texts = []
        for era in ("legacy", "modern"):
            async with Client.memory(server, era=era) as client:
                result = await client.call_tool("readings", {"count": 2})
                assert result.structured_content == [{"celsius": 20.5}, {"celsius": 21.5}]
                assert (await client.call_tool("total")).structured_content == 7
                path = tmp_path / f"readings_{era}.py"
                texts.append(await generate(client, path))
                path.write_text(texts[-1])
        # Past the header, which names the server when the session knows it.
        body = [text.partition("from __future__")[2].replace("the server,", "") for text in texts]
        body = [text.replace("readings 0.1.0,", "") for text in body]
        assert body[0] == body[1]
        module = load(tmp_path / "readings_legacy.py")
        try:
            async with Client.memory(server, era="legacy") as client:
                tools = module.Tools(client)
                got = await tools.readings(count=1)
                assert [item.celsius for item in got] == [20.5]
                assert await tools.total() == 7
        finally:
            sys.modules.pop("readings_legacy", None)

    asyncio.run(main())
    assert _mypy(tmp_path, "readings_legacy.py").startswith("Success")


class Event(msgspec.Struct):
    title: str
    starts: datetime
    ends: datetime | None = None


def test_datetime_results_are_typed_datetime(tmp_path: Path) -> None:
    """A `datetime` field of a tool's result is advertised with `format: date-time`, so
    the stubs type it `datetime` and decode it to one."""
    server = Server("calendar")
    starts = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)

    @server.tool
    def next_event() -> Event:
        return Event(title="standup", starts=starts)

    async def main() -> None:
        async with Client.memory(server) as client:
            (tool,) = await client.list_tools()
            assert tool.output_schema is not msgspec.UNSET
            properties = tool.output_schema["properties"]
            assert properties["starts"] == {"type": "string", "format": "date-time"}
            assert {"type": "string", "format": "date-time"} in properties["ends"]["anyOf"]
            path = tmp_path / "calendar_tools.py"
            path.write_text(await generate(client, path))
            module = load(path)
            try:
                event = await module.Tools(client).next_event()
                assert event.starts == starts and event.ends is None
            finally:
                sys.modules.pop(path.stem, None)

    asyncio.run(main())
    text = (tmp_path / "calendar_tools.py").read_text()
    assert "starts: datetime\n" in text and "ends: datetime | " in text, text
