"""`ctx.elicit(message, Model)`: the form's schema from a type, and the answer validated
as that type (a msgspec Struct, a dataclass, a TypedDict, or a pydantic model; pydantic
is imported only for a pydantic model, which means the caller imported it already)."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Generic, Literal, TypeVar

import msgspec

from mcpgen._errors import McpError
from mcpgen_types import latest as t

__all__ = ["Elicited", "form_schema", "validated"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class Elicited(Generic[T]):
    """The answer to `ctx.elicit(message, Model)`: the user's `action`, and with
    "accept" the answer as a `Model` (`data`; None otherwise) next to the raw `content`."""

    action: Literal["accept", "decline", "cancel"]
    data: T | None
    content: dict[str, Any] | None


def _pydantic_model(model: type) -> bool:
    pydantic = sys.modules.get("pydantic")
    return (
        pydantic is not None and isinstance(model, type) and issubclass(model, pydantic.BaseModel)
    )


def form_schema(model: type) -> dict[str, Any]:
    """The JSON Schema of the form a type describes (its top-level object)."""
    if _pydantic_model(model):
        schema: dict[str, Any] = model.model_json_schema()  # type: ignore[attr-defined]
        return schema
    (top,), components = msgspec.json.schema_components([model], ref_template="{name}")
    return dict(components[top["$ref"]]) if "$ref" in top else dict(top)


def validated(result: t.ElicitResult, model: type[T]) -> Elicited[T]:
    """`result` with its content as a `model`; an accepted answer that is not one is the
    client's error (McpError, invalid params), reported to the tool's caller."""
    content = None if result.content is msgspec.UNSET else dict(result.content or {})
    if result.action != "accept":
        return Elicited(result.action, None, content)
    try:
        if _pydantic_model(model):
            data: T = model.model_validate(content or {})  # type: ignore[attr-defined]
        else:
            data = msgspec.convert(content or {}, model)
    except (msgspec.ValidationError, ValueError) as exc:
        raise McpError(
            t.INVALID_PARAMS, f"the answer does not fit the requested form: {exc}"
        ) from None
    return Elicited("accept", data, content)
