"""Pydantic models as tool parameters and return types (issue 11, item 9).

A tool with pydantic in its signature gets its inputSchema from pydantic (the whole
argument set is one model), its arguments validated by pydantic (errors are tool errors
with the field path, as for msgspec), model instances in its handler, and for a model
return an outputSchema from pydantic (serialization mode) with the model dumped by alias
as structuredContent. Aliases: the schemas name fields by alias, arguments are accepted
by alias, results are dumped by alias. pydantic is optional: `import mcpgen` and serving
a plain tool never import it.

Run as `python -m tests.server.test_pydantic` it serves `server` over stdio for the
official Python SDK's client (tests/interop/official_results_client.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import json
import os
import signal
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import Annotated, Any

import jsonschema_rs
import msgspec
import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

from mcpgen import Header, Server
from mcpgen._errors import ConfigurationError
from mcpgen._server._content import ArgumentsError
from mcpgen._server._context import Context
from mcpgen._server._defs import build_tool
from tests import tooling
from tests.server.harness import Client, request
from tests.server.output_matrix import ABSENT, Case
from tests.server.test_tasks import call, run, settle

MODERN, LEGACY = "2026-07-28", "2025-11-25"
REPO = Path(__file__).resolve().parents[2]
OFFICIAL_CLIENT = REPO / "tests" / "interop" / "official_results_client.py"


class Unit(enum.Enum):
    METRE = "m"
    FOOT = "ft"


class Point(BaseModel):
    x: float = Field(description="east of the origin", ge=-1000)
    y: float = 0.0


class Route(BaseModel):
    model_config = ConfigDict(populate_by_name=False)

    route_name: str = Field(alias="routeName", min_length=1)
    stops: list[Point]
    unit: Unit = Unit.METRE
    note: str | None = None


class Summary(BaseModel):
    total_length: float = Field(serialization_alias="totalLength")
    stops: int
    unit: Unit


@pydantic_dataclass
class Box:
    low: Point
    high: Point


server = Server("pydantic-tools")
SEEN: list[Any] = []  # what handlers received


@server.tool()
def measure(route: Route, scale: Annotated[float, Field(gt=0)] = 1.0) -> Summary:
    """The length of a route."""
    SEEN.append(route)
    length = sum(
        ((b.x - a.x) ** 2 + (b.y - a.y) ** 2) ** 0.5
        for a, b in zip(route.stops, route.stops[1:], strict=False)
    )
    return Summary(total_length=length * scale, stops=len(route.stops), unit=route.unit)


@server.tool()
def corners(box: Box | None = None) -> list[Point]:
    SEEN.append(box)
    if box is None:
        return [Point(x=0)]
    return [box.low, Point(x=box.high.x, y=box.low.y), box.high]


SOME_POINTS = [Point(x=1), Point(x=-2)]


@server.tool()
def nearest(points: list[Point] = SOME_POINTS) -> Point | None:
    return min(points, key=lambda p: abs(p.x) + abs(p.y), default=None)


@server.tool()
def count(n: int = Field(default=3, ge=1, le=10, description="how many")) -> list[int]:
    return list(range(n))


@server.tool()
def regional(
    point: Point,
    region: Annotated[str, Header("Region")] = "eu",
    label: Annotated[str, msgspec.Meta(min_length=2, description="shown")] = "here",
) -> str:
    return f"{region}:{label}:{point.x}"


@server.tool()
def origin() -> Point:
    """A plain signature that returns a model."""
    return Point(x=0.0)


@server.tool()
def unknown() -> Any:
    """No output schema: the model still goes out as JSON."""
    return Point(x=2.5)


# -- helpers ---------------------------------------------------------------------------------
def _client(version: str) -> Client:
    client = Client(server)
    if version != MODERN:
        client.initialize(version)
    return client


def _result(version: str, method: str, params: Any = None) -> Any:
    reply = _client(version).reply(request(7, method, params, modern=version == MODERN))
    assert reply is not None and "result" in reply, reply
    return reply["result"]


def _tool(name: str, version: str = MODERN) -> dict[str, Any]:
    tools = {tool["name"]: tool for tool in _result(version, "tools/list")["tools"]}
    return tools[name]  # type: ignore[no-any-return]


def _call(name: str, arguments: dict[str, Any], version: str = MODERN) -> dict[str, Any]:
    return _result(version, "tools/call", {"name": name, "arguments": arguments})  # type: ignore[no-any-return]


ROUTE = {"routeName": "walk", "stops": [{"x": 0}, {"x": 3, "y": 4}], "unit": "ft"}


# -- input schemas ----------------------------------------------------------------------------
def test_input_schema_is_pydantics_with_defs_at_the_root() -> None:
    schema = _tool("measure")["inputSchema"]
    assert schema["type"] == "object" and "title" not in schema
    assert schema["required"] == ["route"]
    assert schema["properties"] == {
        "route": {"$ref": "#/$defs/Route"},
        "scale": {"type": "number", "exclusiveMinimum": 0, "default": 1.0},
    }
    route = schema["$defs"]["Route"]
    # by alias, with the constraint, the enum by $ref with its default, the optional field
    assert route["required"] == ["routeName", "stops"]
    assert route["properties"]["routeName"]["minLength"] == 1
    assert route["properties"]["stops"]["items"] == {"$ref": "#/$defs/Point"}
    assert route["properties"]["unit"] == {"$ref": "#/$defs/Unit", "default": "m"}
    assert route["properties"]["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert schema["$defs"]["Unit"]["enum"] == ["m", "ft"]
    point = schema["$defs"]["Point"]["properties"]["x"]
    assert point["description"] == "east of the origin" and point["minimum"] == -1000
    jsonschema_rs.validator_for(schema)  # a valid schema, its $refs resolve
    assert jsonschema_rs.is_valid(schema, {"route": ROUTE})
    assert not jsonschema_rs.is_valid(schema, {"route": {**ROUTE, "routeName": ""}})


def test_field_defaults_and_our_markers_in_a_pydantic_signature() -> None:
    assert _tool("count")["inputSchema"]["properties"]["n"] == {
        "type": "integer",
        "default": 3,
        "minimum": 1,
        "maximum": 10,
        "description": "how many",
    }
    schema = _tool("regional")["inputSchema"]
    assert schema["properties"]["region"]["x-mcp-header"] == "Region"
    assert schema["properties"]["label"]["minLength"] == 2
    assert schema["properties"]["label"]["description"] == "shown"
    # A pydantic dataclass and a default list of models
    assert _tool("corners")["inputSchema"]["properties"]["box"]["anyOf"][0] == {
        "$ref": "#/$defs/Box"
    }
    assert _tool("nearest")["inputSchema"]["properties"]["points"]["default"] == [
        {"x": 1.0, "y": 0.0},
        {"x": -2.0, "y": 0.0},
    ]


def test_a_plain_signature_keeps_msgspecs_schema() -> None:
    assert _tool("origin")["inputSchema"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


# -- calls ------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_the_handler_gets_model_instances(version: str) -> None:
    SEEN.clear()
    result = _call("measure", {"route": ROUTE, "scale": 2, "ignored": 1}, version)
    route = SEEN[-1]
    assert isinstance(route, Route) and route.unit is Unit.FOOT
    assert isinstance(route.stops[1], Point) and route.stops[1].y == 4.0
    assert result["structuredContent"] == {"totalLength": 10.0, "stops": 2, "unit": "ft"}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    _call("corners", {"box": {"low": {"x": 1}, "high": {"x": 2, "y": 2}}}, version)
    assert isinstance(SEEN[-1], Box) and isinstance(SEEN[-1].high, Point)
    assert _call("regional", {"point": {"x": 5}}, version)["content"][0]["text"] == "eu:here:5.0"
    assert json.loads(_call("count", {}, version)["content"][0]["text"]) == [0, 1, 2]


@pytest.mark.parametrize("version", [MODERN, LEGACY])
def test_validation_errors_are_tool_errors_with_paths(version: str) -> None:
    bad = {"routeName": "", "stops": [{"x": -5000}, {"y": "north"}], "unit": "mile"}
    result = _call("measure", {"route": bad, "scale": 0}, version)
    assert result["isError"] is True
    message = result["content"][0]["text"]
    assert message.startswith("Invalid arguments for tool 'measure': ")
    for where in (
        "$.route.routeName",
        "$.route.stops[0].x",
        "$.route.stops[1].x",  # missing
        "$.route.stops[1].y",  # not a number
        "$.route.unit",
        "$.scale",
    ):
        assert f"- at `{where}`" in message, where
    assert "Field required - at `$.route.stops[1].x`" in message
    assert "Input should be greater than 0 - at `$.scale`" in message
    assert message.endswith(
        "Check the tool's inputSchema and call it again with corrected arguments."
    )
    # The alias is the name on the wire, as the schema says.
    by_name = {**ROUTE, "route_name": "walk"}
    del by_name["routeName"]
    assert (
        "$.route.routeName" in _call("measure", {"route": by_name}, version)["content"][0]["text"]
    )
    assert _call("measure", {}, version)["content"][0]["text"].startswith(
        "Invalid arguments for tool 'measure': Field required - at `$.route`"
    )
    assert _call("count", {"n": 11}, version)["isError"] is True
    assert _call("regional", {"point": {"x": 1}, "label": "x"}, version)["isError"] is True


def test_more_than_ten_errors_are_counted() -> None:
    stops = [{"x": "a"}] * 12
    message = _call("measure", {"route": {"routeName": "r", "stops": stops}})["content"][0]["text"]
    assert message.count("- at `") == 10 and "and 2 more." in message


# -- results ----------------------------------------------------------------------------------
OUTPUTS = {
    "measure": ({"route": ROUTE}, {"totalLength": 5.0, "stops": 2, "unit": "ft"}),
    "corners": ({}, [{"x": 0.0, "y": 0.0}]),
    "nearest": ({}, {"x": 1.0, "y": 0.0}),
    "origin": ({}, {"x": 0.0, "y": 0.0}),
}


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_model_returns_send_structured_content_matching_the_output_schema(name: str) -> None:
    arguments, structured = OUTPUTS[name]
    schema = _tool(name)["outputSchema"]
    result = _call(name, arguments)
    assert result["structuredContent"] == structured
    assert json.loads(result["content"][0]["text"]) == structured
    jsonschema_rs.validate(schema, structured)


def test_output_schema_shapes() -> None:
    summary = _tool("measure")["outputSchema"]
    # serialization mode: the serialization alias names the field
    assert summary["required"] == ["totalLength", "stops", "unit"] and "title" not in summary
    assert summary["properties"]["unit"] == {"$ref": "#/$defs/Unit"}
    assert _tool("corners")["outputSchema"]["items"] == {"$ref": "#/$defs/Point"}
    assert _tool("nearest")["outputSchema"]["anyOf"] == [
        {"$ref": "#/$defs/Point"},
        {"type": "null"},
    ]
    assert "outputSchema" not in _tool("unknown")
    assert "outputSchema" not in _tool("regional")  # -> str


def test_legacy_output_schemas_are_object_schemas() -> None:
    assert _tool("measure", LEGACY)["outputSchema"] == _tool("measure")["outputSchema"]
    corners = _tool("corners", LEGACY)["outputSchema"]  # a list: wrapped as {"result": ...}
    assert corners["required"] == ["result"] and corners["x-mcpgen-wrap-result"] is True
    assert corners["properties"]["result"]["type"] == "array"
    result = _call("measure", {"route": ROUTE}, LEGACY)
    assert result["structuredContent"] == {"totalLength": 5.0, "stops": 2, "unit": "ft"}


def test_a_model_without_output_schema_goes_out_as_json() -> None:
    result = _call("unknown", {})
    assert result["structuredContent"] == {"x": 2.5, "y": 0.0}
    assert json.loads(result["content"][0]["text"]) == {"x": 2.5, "y": 0.0}


def test_a_pydantic_dataclass_return() -> None:
    boxes = Server("boxes")

    @boxes.tool()
    def spanning(points: list[Point]) -> Box:
        xs, ys = [p.x for p in points], [p.y for p in points]
        return Box(low=Point(x=min(xs), y=min(ys)), high=Point(x=max(xs), y=max(ys)))

    client = Client(boxes)
    listed = client.reply(request(1, "tools/list"))
    assert listed is not None
    schema = listed["result"]["tools"][0]["outputSchema"]
    assert schema["properties"]["low"] == {"$ref": "#/$defs/Point"}
    points = [{"x": 1, "y": 5}, {"x": -1, "y": 2}]
    reply = client.reply(
        request(2, "tools/call", {"name": "spanning", "arguments": {"points": points}})
    )
    assert reply is not None
    structured = reply["result"]["structuredContent"]
    assert structured == {"low": {"x": -1.0, "y": 2.0}, "high": {"x": 1.0, "y": 5.0}}
    jsonschema_rs.validate(schema, structured)


def test_a_task_tool_with_pydantic_arguments() -> None:
    tasks = Server("pydantic-tasks")

    @tasks.tool(task="optional")
    async def plan(route: Route) -> Summary:
        return Summary(total_length=1.5, stops=len(route.stops), unit=route.unit)

    async def body(c: Client) -> None:
        created = (await call(c, "plan", {"route": ROUTE}))["result"]
        done = await settle(c, created["taskId"])
        assert done["status"] == "completed"
        assert done["result"]["structuredContent"] == {
            "totalLength": 1.5,
            "stops": 2,
            "unit": "ft",
        }
        refused = (await call(c, "plan", {"route": {"stops": 1}}))["result"]
        assert refused["isError"] is True and "`$.route.routeName`" in refused["content"][0]["text"]

    run(tasks, body)


@dataclasses.dataclass
class Labelled:
    label: str
    at: Point


def test_models_found_inside_containers_and_plain_dataclasses() -> None:
    nested = Server("nested")

    @nested.tool()
    def place(by_name: dict[str, Point], pin: Labelled) -> str:
        assert isinstance(by_name["a"], Point) and isinstance(pin.at, Point)
        return f"{pin.label}:{by_name['a'].x + pin.at.x}"

    arguments = {"by_name": {"a": {"x": 1}}, "pin": {"label": "p", "at": {"x": 2}}}
    client = Client(nested)
    reply = client.reply(request(1, "tools/call", {"name": "place", "arguments": arguments}))
    assert reply is not None and reply["result"]["content"][0]["text"] == "p:3.0"
    listed = client.reply(request(2, "tools/list"))
    assert listed is not None
    schema = listed["result"]["tools"][0]["inputSchema"]
    assert schema["properties"]["by_name"]["additionalProperties"] == {"$ref": "#/$defs/Point"}
    assert schema["$defs"]["Labelled"]["properties"]["at"] == {"$ref": "#/$defs/Point"}


def test_parameter_names_that_clash_with_pydantics_own() -> None:
    named = Server("named")
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @named.tool()
        def describe(schema: Point, model_name: str, json: int = 1) -> str:
            return f"{model_name}:{schema.x}:{json}"

    arguments = {"schema": {"x": 4}, "model_name": "m", "json": 2}
    reply = Client(named).reply(
        request(1, "tools/call", {"name": "describe", "arguments": arguments})
    )
    assert reply is not None and reply["result"]["content"][0]["text"] == "m:4.0:2"


def test_every_tool_binds_its_arguments_the_same_way() -> None:
    """`ToolDef.validator.bind` for each kind of tool; for a msgspec tool it says what
    call_tool's inline conversion (the hot path) says."""
    plain = build_tool(lambda a, b=2: a + b, Context, name="plain")
    raw = build_tool(
        lambda **kw: kw,
        Context,
        name="raw",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}}},
    )
    assert plain.args_type is not None and raw.args_type is None
    assert plain.validator.bind({"a": 1}) == {"a": 1, "b": 2}
    assert raw.validator.bind({"a": 1, "z": 0}) == {"a": 1, "z": 0}
    with pytest.raises(ArgumentsError) as caught:
        raw.validator.bind({"a": "x"})
    assert str(caught.value) == 'a: "x" is not of type "integer"'

    typed = Server("typed")

    @typed.tool()
    def add(a: int, b: int = 2) -> int:
        return a + b

    tool = build_tool(add, Context)
    with pytest.raises(ArgumentsError) as caught:
        tool.validator.bind({"a": "x"})
    reply = Client(typed).reply(request(1, "tools/call", {"name": "add", "arguments": {"a": "x"}}))
    assert reply is not None
    assert (
        reply["result"]["content"][0]["text"] == f"Invalid arguments for tool 'add': {caught.value}"
    )

    def pick(p: Point, n: int = 1) -> Point:
        return p

    model = build_tool(pick, Context)
    assert model.args_type is None
    assert model.validator.bind({"p": {"x": 1}}) == {"p": Point(x=1.0), "n": 1}
    with pytest.raises(ArgumentsError, match=r"Field required - at `\$\.p\.x`"):
        model.validator.bind({"p": {}})


def test_a_signature_pydantic_cannot_describe_is_refused() -> None:
    other = Server("bad")

    class Opaque:
        pass

    with pytest.raises(ConfigurationError, match="unsupported parameter type"):

        @other.tool()
        def broken(point: Point, thing: Opaque) -> None:
            del point, thing


def test_our_client_calls_a_pydantic_tool() -> None:
    from mcpgen import Client as McpClient

    async def body() -> None:
        async with McpClient.memory(server) as client:
            result = await client.call_tool("measure", {"route": ROUTE})
            assert result.structured_content == {"totalLength": 5.0, "stops": 2, "unit": "ft"}
            failed = await client.call_tool("measure", {"route": {}})
            assert failed.is_error is True

    asyncio.run(body())


# -- pydantic stays optional ------------------------------------------------------------------
PLAIN = """
import asyncio, sys
import mcpgen
from mcpgen import Client, Server

server = Server("plain")

@server.tool()
def add(a: int, b: int = 2) -> int:
    return a + b

@server.tool()
def pair(a: int) -> dict[str, int]:
    return {"a": a}

async def main() -> None:
    async with Client.memory(server) as client:
        assert (await client.call_tool("add", {"a": 1})).structured_content == 3
        assert (await client.call_tool("add", {"a": "x"})).is_error
        assert (await client.call_tool("pair", {"a": 1})).structured_content == {"a": 1}

asyncio.run(main())
print(sorted(m for m in sys.modules if m.partition(".")[0] in ("pydantic", "pydantic_core")))
"""


def test_pydantic_1_in_sys_modules_leaves_tools_to_msgspec(monkeypatch: pytest.MonkeyPatch) -> None:
    old = types.ModuleType("pydantic")
    old.VERSION = "1.10.13"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pydantic", old)
    plain = Server("plain")

    @plain.tool()
    def add(a: int, b: list[int]) -> dict[str, int]:
        return {"sum": a + sum(b)}

    reply = Client(plain).reply(
        request(1, "tools/call", {"name": "add", "arguments": {"a": 1, "b": [2]}})
    )
    assert reply is not None and reply["result"]["structuredContent"] == {"sum": 3}


def test_import_and_a_plain_tool_do_not_import_pydantic() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PLAIN], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr


if __name__ == "__main__":
    server.run()


# -- the official Python SDK's client ---------------------------------------------------------
# Each tool is called without arguments: the tools that need some answer with a tool error.
OFFICIAL: dict[str, tuple[Any, bool]] = {
    "measure": (ABSENT, True),
    "regional": (ABSENT, True),
    "corners": ([{"x": 0.0, "y": 0.0}], False),
    "nearest": ({"x": 1.0, "y": 0.0}, False),
    "count": ([0, 1, 2], False),
    "origin": ({"x": 0.0, "y": 0.0}, False),
    "unknown": ({"x": 2.5, "y": 0.0}, False),
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", MODERN])
def test_the_official_client_accepts_every_result(mode: str) -> None:
    """Over stdio; the official client checks structuredContent against the outputSchema
    and raises when it is missing or does not match."""
    command = [sys.executable, "-m", "tests.server.test_pydantic"]
    proc = subprocess.Popen(
        [tooling.official_python(), str(OFFICIAL_CLIENT), "--mode", mode, "--", *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        pytest.fail(f"the official client ran over 120 s\n{out}\n{err[-3000:]}")
    report = json.loads(out)
    assert proc.returncode == 0 and not report["errors"], f"{report['errors']}\n{err[-3000:]}"
    tools = report["tools"]
    assert sorted(tools) == sorted(OFFICIAL)
    for name, (structured, is_error) in OFFICIAL.items():
        entry = tools[name]
        assert "error" not in entry, (name, entry["error"])
        expected = Case(_tool(name).get("outputSchema"), structured, ["text"])
        if mode == "legacy":
            expected = expected.legacy(LEGACY)
        got = Case(entry["outputSchema"], entry.get("structuredContent", ABSENT), entry["content"])
        assert (got, entry["isError"]) == (expected, is_error), name
