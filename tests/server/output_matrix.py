"""A server whose tools cross return annotations with returned values, and what each
must answer in 2026-07-28: the output schema advertised, the structuredContent sent, the
content block types. Content-block returns (bare, in a list or sequence, in a union,
`Any`, an untyped list) advertise no output schema; a tool that advertises one always
sends structuredContent.

Shared by tests/server/test_output_schema.py (in process) and
tests/interop/test_official_results.py, which runs it over stdio
(`python -m tests.server.output_matrix`) for the official Python client.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypedDict

import msgspec

from mcpgen import Server
from mcpgen_types import latest as t

__all__ = ["ABSENT", "CASES", "Case", "server"]

ABSENT: Any = msgspec.UNSET  # the key is not in the result


class Case(NamedTuple):
    schema: dict[str, Any] | None  # the tool's outputSchema in 2026-07-28
    structured: Any  # structuredContent in 2026-07-28, ABSENT when not sent
    content: list[str]  # the content block types

    def legacy(self, version: str) -> Case:
        """The same case in a legacy revision: there, an output schema must be an object
        schema and structuredContent an object (both since 2025-06-18); what is not
        travels wrapped, as `{"result": value}` under the wrapping schema."""
        if version < "2025-06-18":
            return Case(None, ABSENT, self.content)
        schema, structured = self.schema, self.structured
        if schema is not None and schema.get("type") != "object":
            # A list or a number travels as {"result": ...}, its definitions at the root.
            inner = {k: v for k, v in schema.items() if k != "$defs"}
            wrapping = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
            defs = {"$defs": schema["$defs"]} if "$defs" in schema else {}
            schema = {**defs, **wrapping, "x-mcpgen-wrap-result": True}
            if structured is not ABSENT:  # every value of such a tool, an object too
                structured = {"result": structured}
        elif structured is not ABSENT and not isinstance(structured, dict):
            structured = {"result": structured}
        return Case(schema, structured, self.content)


class Point(msgspec.Struct):
    x: int
    y: int


class Pair(TypedDict):
    left: str
    right: str


@dataclasses.dataclass
class Size:
    width: int
    height: int


TEXT = t.TextContent(text="hi")
IMAGE = t.ImageContent(data="aGk=", mime_type="image/png")

INT_MAP = {"type": "object", "additionalProperties": {"type": "integer"}}
POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
}
DECLARED = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

server = Server("output-matrix", "1.0.0")
CASES: dict[str, Case] = {}


def case(expected: Case, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        server.add_tool(fn, **options)
        CASES[fn.__name__] = expected
        return fn

    return register


@case(Case(None, ABSENT, ["text"]))
def text_str() -> str:
    return "hi"


@case(Case({"type": "integer"}, 5, ["text"]))
def number_int() -> int:
    return 5


@case(Case(INT_MAP, {"a": 1}, ["text"]))
def mapping_dict() -> dict[str, int]:
    return {"a": 1}


@case(Case(POINT, {"x": 1, "y": 2}, ["text"]))
def point_struct() -> Point:
    return Point(1, 2)


@case(
    Case(
        {
            "type": "object",
            "properties": {"left": {"type": "string"}, "right": {"type": "string"}},
            "required": ["left", "right"],
        },
        {"left": "l", "right": "r"},
        ["text"],
    )
)
def pair_typed_dict() -> Pair:
    return {"left": "l", "right": "r"}


@case(
    Case(
        {
            "type": "object",
            "properties": {"width": {"type": "integer"}, "height": {"type": "integer"}},
            "required": ["width", "height"],
        },
        {"width": 3, "height": 4},
        ["text"],
    )
)
def size_dataclass() -> Size:
    return Size(3, 4)


@case(Case({"type": "array", "items": {"type": "string"}}, ["a", "b"], ["text"]))
def strings_list() -> list[str]:
    return ["a", "b"]


@case(Case({"type": "array", "items": {"type": "integer"}}, [1, 2], ["text"]))
async def numbers_async() -> list[int]:
    return [1, 2]


@case(Case(None, ABSENT, ["text", "image"]))
def blocks_list() -> list[t.ContentBlock]:
    return [TEXT, IMAGE]


@case(Case(None, ABSENT, ["text"]))
def text_blocks_list() -> list[t.TextContent]:
    return [TEXT]


@case(Case(None, ABSENT, ["text", "image"]))
def blocks_sequence() -> Sequence[t.ContentBlock]:
    return (TEXT, IMAGE)


@case(Case(None, ABSENT, ["text", "image"]))
def bare_list_blocks() -> list:  # type: ignore[type-arg]
    return [TEXT, IMAGE]


@case(Case(None, [1, 2], ["text"]))
def bare_list_values() -> list:  # type: ignore[type-arg]
    return [1, 2]


@case(Case(None, ABSENT, ["image"]))
def any_list_blocks() -> list[Any]:
    return [IMAGE]


@case(Case(None, ABSENT, ["text"]))
def block_text() -> t.TextContent:
    return TEXT


@case(Case(None, ABSENT, ["image"]))
async def block_image() -> t.ImageContent:
    return IMAGE


@case(Case(None, {"a": 1}, ["text"]))
def any_dict() -> Any:
    return {"a": 1}


@case(Case(None, ABSENT, ["image"]))
def any_block() -> Any:
    return IMAGE


@case(Case(None, ABSENT, ["text"]))
def union_gives_text() -> str | t.ImageContent:
    return "hi"


@case(Case(None, ABSENT, ["image"]))
def union_gives_image() -> str | t.ImageContent:
    return IMAGE


@case(Case(None, ABSENT, []))
def optional_blocks_none() -> list[t.ContentBlock] | None:
    return None


@case(Case(None, ABSENT, ["text"]))
def optional_text() -> str | None:
    return "hi"


@case(Case({"anyOf": [INT_MAP, {"type": "null"}]}, None, ["text"]))
def optional_mapping_none() -> dict[str, int] | None:
    return None


@case(Case({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "x", ["text"]))
def number_or_text() -> int | str:
    return "x"


@case(Case(None, ABSENT, ["text"]))
def call_result() -> t.CallToolResult:
    return t.CallToolResult(content=[TEXT])


@case(Case(None, {"a": 1}, ["text"]))
def untyped():  # type: ignore[no-untyped-def]
    return {"a": 1}


@case(Case(DECLARED, {"n": 1}, ["text"]), output_schema=DECLARED)
def declared_schema() -> Any:
    return {"n": 1}


@case(Case(None, ABSENT, []))
def returns_none() -> None:
    return None


if __name__ == "__main__":
    server.run()
