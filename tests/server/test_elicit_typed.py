"""`await ctx.elicit(message, Model)` (issue 24, item 13): the form's schema comes from
the type and the answer comes back validated as that type, for a msgspec Struct, a
dataclass, a TypedDict and a pydantic model, in both eras; a declined form has no data,
and an answer that does not fit is an error, not a dict passed on."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import date
from pathlib import Path
from typing import Any, TypedDict

import msgspec
import pydantic
import pytest

from mcpgen import Client, Context, Elicited, McpError, Server
from mcpgen_types import latest as t
from tests.typecheck import check_marks


class OrderStruct(msgspec.Struct):
    item: str
    quantity: int
    when: date


@dataclasses.dataclass
class OrderData:
    item: str
    quantity: int
    when: date


class OrderDict(TypedDict):
    item: str
    quantity: int
    when: date


class OrderModel(pydantic.BaseModel):
    item: str
    quantity: int
    when: date


MODELS: dict[str, type[Any]] = {
    "struct": OrderStruct,
    "dataclass": OrderData,
    "typeddict": OrderDict,
    "pydantic": OrderModel,
}


def build() -> Server:
    server = Server("typed-elicit")

    @server.tool
    async def order(ctx: Context, kind: str) -> str:
        answer = await ctx.elicit("What would you like?", MODELS[kind])
        assert isinstance(answer, Elicited)
        data = answer.data
        if data is None:
            return f"{answer.action}: no order"
        if isinstance(data, dict):
            item, quantity, when = data["item"], data["quantity"], data["when"]
        else:
            item, quantity, when = data.item, data.quantity, data.when
        assert isinstance(when, date) and answer.content is not None
        return f"{type(data).__name__}: {quantity} x {item} on {when.isoformat()}"

    return server


def _answer(content: dict[str, Any], action: str = "accept") -> Any:
    seen: list[t.ElicitRequestParams] = []

    def on_elicitation(params: t.ElicitRequestParams) -> t.ElicitResult:
        seen.append(params)
        return t.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return on_elicitation, seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_the_answer_is_the_requested_type(era: str, kind: str) -> None:
    good = {"item": "apple", "quantity": 2, "when": "2026-05-01"}
    on_elicitation, seen = _answer(good)

    async def main() -> None:
        async with Client.memory(build(), era=era, on_elicitation=on_elicitation) as client:
            result = await client.call_tool("order", {"kind": kind})
            name = MODELS[kind].__name__ if kind != "typeddict" else "dict"
            assert result.content[0].text == f"{name}: 2 x apple on 2026-05-01"
            schema = seen[0].requested_schema
            assert set(schema.properties) == {"item", "quantity", "when"}
            assert sorted(schema.required or ()) == ["item", "quantity", "when"]

    asyncio.run(main())


def test_declined_has_no_data_and_a_bad_answer_is_an_error() -> None:
    declined, _ = _answer({}, "decline")
    wrong, _ = _answer({"item": "apple", "quantity": "many", "when": "2026-05-01"})

    async def main() -> None:
        async with Client.memory(build(), on_elicitation=declined) as client:
            result = await client.call_tool("order", {"kind": "struct"})
            assert result.content[0].text == "decline: no order"
        async with Client.memory(build(), era="legacy", on_elicitation=wrong) as client:
            with pytest.raises(McpError) as caught:
                await client.call_tool("order", {"kind": "pydantic"})
            assert caught.value.code == t.INVALID_PARAMS
            assert "does not fit the requested form" in caught.value.message

    asyncio.run(main())


TYPED = """import msgspec
import pydantic

from mcpgen import Context


class Order(msgspec.Struct):
    item: str


class Model(pydantic.BaseModel):
    item: str


async def handler(ctx: Context) -> None:
    answer = await ctx.elicit("?", Order)
    reveal_type(answer.data)  # R: typed.Order | None
    model = await ctx.elicit("?", Model)
    reveal_type(model.data)  # R: typed.Model | None
    raw = await ctx.elicit("?", {"type": "object", "properties": {}})
    reveal_type(raw)  # R: mcpgen_types.v2026_07_28.ElicitResult
"""


@pytest.mark.slow
def test_mypy_knows_the_type(tmp_path: Path) -> None:
    check_marks(TYPED, tmp_path)
