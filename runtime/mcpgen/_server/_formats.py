"""`format: date-time` for every `datetime` in a generated schema.

msgspec writes the format only for `datetime`s that must carry a timezone
(`Meta(tz=True)`); a plain `datetime` gets `{"type": "string"}`, the schema of any string,
so a client (or `mcpgen stubs`) cannot tell that the value is a timestamp. This walks the
types beside the schema msgspec wrote and adds the format where the type is a
`datetime` that is not explicitly naive (`Meta(tz=False)`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec.inspect as mi

__all__ = ["mark_datetimes"]

_ITEMS = (mi.ListType, mi.SetType, mi.FrozenSetType, mi.VarTupleType)
_RECORDS = (mi.StructType, mi.DataclassType, mi.TypedDictType)


def mark_datetimes(
    types: Iterable[Any], schemas: Iterable[dict[str, Any]], components: Mapping[str, Any]
) -> None:
    """Add the format in place to `schemas` (msgspec's, for `types`) and `components`."""
    seen: set[Any] = set()
    for info, schema in zip(mi.multi_type_info(list(types)), schemas, strict=True):
        _mark(info, schema, components, seen)


def _resolved(schema: Any, components: Mapping[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str):
        return components.get(ref.rsplit("/", 1)[-1])
    return schema


def _mark(info: Any, schema: Any, components: Mapping[str, Any], seen: set[Any]) -> None:
    schema = _resolved(schema, components)
    if not isinstance(schema, dict):
        return
    if isinstance(info, mi.Metadata):
        _mark(info.type, schema, components, seen)
    elif isinstance(info, mi.DateTimeType):
        if info.tz is not False and schema.get("type") == "string":
            schema.setdefault("format", "date-time")
    elif isinstance(info, _RECORDS):
        if info.cls in seen:
            return
        seen.add(info.cls)
        properties = schema.get("properties") or {}
        for field in info.fields:
            _mark(field.type, properties.get(field.encode_name), components, seen)
    elif isinstance(info, _ITEMS):
        _mark(info.item_type, schema.get("items"), components, seen)
    elif isinstance(info, mi.TupleType):
        for item, part in zip(info.item_types, schema.get("prefixItems") or (), strict=False):
            _mark(item, part, components, seen)
    elif isinstance(info, mi.DictType):
        _mark(info.value_type, schema.get("additionalProperties"), components, seen)
    elif isinstance(info, mi.UnionType):
        options = schema.get("anyOf")
        for member in info.types:
            if options is None:
                _mark(member, schema, components, seen)
            else:
                for option in options:
                    if _fits(member, option):
                        _mark(member, option, components, seen)


def _fits(member: Any, option: Any) -> bool:
    """Whether a union's schema `option` is the one msgspec wrote for `member`."""
    while isinstance(member, mi.Metadata):
        member = member.type
    if not isinstance(option, dict):
        return False
    if isinstance(member, _RECORDS):
        ref = option.get("$ref")
        return isinstance(ref, str) and ref.rsplit("/", 1)[-1] == member.cls.__name__
    kind = option.get("type")
    if isinstance(member, mi.DateTimeType):
        return kind == "string" and "format" not in option and "enum" not in option
    if isinstance(member, (*_ITEMS, mi.TupleType)):
        return kind == "array"
    if isinstance(member, mi.DictType):
        return kind == "object"
    return False
