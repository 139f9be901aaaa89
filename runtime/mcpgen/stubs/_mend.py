"""What the model generator is given, and what it writes, mended where its output would
fail mypy --strict or ruff, or decode less than the schema says:

- an `enum` that repeats a value keeps it once: JSON Schema's enum is a set, so the
  repeat adds nothing, while in an Enum class it is an alias that ruff refuses (PIE796);
- a variant of a discriminated union that inherits the discriminator property through
  an `allOf` base is written flat, its bases' properties copied in: a subclass narrowing
  the inherited field to its tag breaks mypy's override rule, and msgspec tags a struct
  (and so decodes the union) only when no struct of its hierarchy keeps the tag a field;
- an enum member whose name is an attribute of its class (`title` or `count` on a
  StrEnum, `real` on an IntEnum, `name` and `value` on any Enum) gets a trailing
  underscore; its value, which is what goes on the wire, stays.
"""

from __future__ import annotations

import ast
import enum
import json
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["mend_members", "mend_schema"]

# Keywords whose value is data (an instance, a list of them), never a schema.
_DATA = frozenset({"default", "const", "enum", "example", "examples"})
# Keywords whose value maps names (of properties, of definitions) to schemas.
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# Lists an OpenAPI/JSON Schema extension keeps beside `enum`, one item per value.
_PARALLEL = ("x-enum-varnames", "x-enumNames", "x-enum-descriptions", "x-enumDescriptions")
# Keys of a base that stay its own when its properties are copied into a variant.
_OWN = frozenset({"title", "description", "discriminator", "$id", "$anchor", "examples"})
_BASES: dict[str, type] = {
    "Enum": enum.Enum,
    "StrEnum": enum.StrEnum,
    "IntEnum": enum.IntEnum,
    "IntFlag": enum.IntFlag,
    "Flag": enum.Flag,
    "str": str,
    "int": int,
    "float": float,
    "bytes": bytes,
}


def mend_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` (a JSON Schema document) with repeated enum values dropped and the
    variants of discriminated unions that inherit their tag written flat."""
    mended: dict[str, Any] = _unique_enums(schema)
    for key in ("$defs", "definitions"):
        defs = mended.get(key)
        if isinstance(defs, dict):
            mended[key] = _flat_variants(defs, f"#/{key}/", mended)
    return mended


def _key(value: Any) -> tuple[str, Any]:
    """Equal JSON values, equal keys (1 and 1.0 are one number; true is not 1)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    return ("json", json.dumps(value, sort_keys=True))


def _unique_enums(node: Any, *, named: bool = False) -> Any:
    if isinstance(node, list):
        return [_unique_enums(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: v if k in _DATA and not named else _unique_enums(v, named=k in _NAMED and not named)
        for k, v in node.items()
    }
    values = node.get("enum")
    if named or not isinstance(values, list):
        return out
    first: dict[tuple[str, Any], int] = {}
    for at, value in enumerate(values):
        first.setdefault(_key(value), at)
    kept = sorted(first.values())
    if len(kept) < len(values):
        for key in ("enum", *_PARALLEL):
            listed = node.get(key)
            if isinstance(listed, list) and len(listed) == len(values):
                out[key] = [listed[at] for at in kept]
    return out


def _unions(node: Any) -> Iterator[tuple[str, list[str]]]:
    """(property, variant references) of every discriminated union under `node`."""
    if isinstance(node, list):
        for item in node:
            yield from _unions(item)
        return
    if not isinstance(node, dict):
        return
    discriminator = node.get("discriminator")
    if isinstance(discriminator, dict) and isinstance(discriminator.get("propertyName"), str):
        refs = [
            str(member["$ref"])
            for key in ("oneOf", "anyOf")
            for member in node.get(key) or []
            if isinstance(member, dict) and isinstance(member.get("$ref"), str)
        ]
        mapping = discriminator.get("mapping")
        if isinstance(mapping, dict):
            refs += [str(ref) for ref in mapping.values()]
        yield discriminator["propertyName"], refs
    for key, value in node.items():
        if key not in _DATA:
            yield from _unions(value)


def _parents(defs: Mapping[str, Any], name: str, prefix: str) -> list[str]:
    """The definitions `name` names as whole parts of its `allOf`."""
    schema = defs.get(name)
    parts = schema.get("allOf") if isinstance(schema, dict) else None
    return [
        part["$ref"][len(prefix) :]
        for part in parts or []
        if isinstance(part, dict)
        and isinstance(part.get("$ref"), str)
        and part["$ref"].startswith(prefix)
        and part["$ref"][len(prefix) :] in defs
    ]


def _inherits(defs: Mapping[str, Any], name: str, prefix: str, prop: str, seen: set[str]) -> bool:
    for parent in _parents(defs, name, prefix):
        if parent in seen:
            continue
        seen.add(parent)
        properties = defs[parent].get("properties")
        if isinstance(properties, dict) and prop in properties:
            return True
        if _inherits(defs, parent, prefix, prop, seen):
            return True
    return False


def _flattened(defs: Mapping[str, Any], name: str, prefix: str, seen: frozenset[str]) -> Any:
    """`name`'s schema with each `allOf` base replaced by its own (flattened) keywords."""
    schema = defs[name]
    parents = set(_parents(defs, name, prefix)) - seen
    if not parents:
        return schema
    parts = []
    for part in schema["allOf"]:
        ref = part.get("$ref") if isinstance(part, dict) else None
        parent = ref[len(prefix) :] if isinstance(ref, str) else None
        if parent in parents and len(part) == 1:
            inherited = _flattened(defs, parent, prefix, seen | {parent})
            parts.append({k: v for k, v in inherited.items() if k not in _OWN})
        else:
            parts.append(part)
    return {**schema, "allOf": parts}


def _flat_variants(defs: dict[str, Any], prefix: str, root: Any) -> dict[str, Any]:
    flat = dict(defs)
    for prop, refs in _unions(root):
        for ref in refs:
            name = ref[len(prefix) :] if ref.startswith(prefix) else None
            if name in defs and _inherits(defs, name, prefix, prop, {name}):
                flat[name] = _flattened(defs, name, prefix, frozenset({name}))
    return flat


def _reserved(bases: list[ast.expr]) -> set[str]:
    names = {base.id for base in bases if isinstance(base, ast.Name)}
    names |= {base.attr for base in bases if isinstance(base, ast.Attribute)}
    classes = [_BASES[name] for name in names if name in _BASES]
    if not any(issubclass(cls, enum.Enum) for cls in classes):
        return set()
    # What the classes, their ancestors and their metaclasses define (`dir` of an Enum
    # class would list its members instead).
    metaclasses: list[type] = [type(cls) for cls in classes]
    return {
        name
        for cls in [*classes, *metaclasses]
        for ancestor in cls.__mro__
        for name in vars(ancestor)
    }


def _renames(tree: ast.Module) -> dict[tuple[str, str], str]:
    """(enum class, member) -> the member's new name, for the members that clash."""
    renames: dict[tuple[str, str], str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        reserved = _reserved(node.bases)
        members = [
            target.id
            for item in node.body
            if isinstance(item, ast.Assign | ast.AnnAssign)
            for target in (item.targets if isinstance(item, ast.Assign) else [item.target])
            if isinstance(target, ast.Name)
        ]
        taken = set(members) | reserved
        for member in members:
            if member in reserved:
                new = member + "_"
                while new in taken:
                    new += "_"
                taken.add(new)
                renames[node.name, member] = new
    return renames


def mend_members(code: str) -> str:
    """`code` (the generator's module) with each enum member named like an attribute of
    its class renamed, where it is defined and wherever `Class.member` names it."""
    tree = ast.parse(code)
    renames = _renames(tree)
    if not renames:
        return code
    spots: list[tuple[int, int, str, str]] = []  # line, byte column, old, new
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            targets = item.targets if isinstance(item, ast.Assign) else []
            for target in targets:
                new = renames.get((node.name, getattr(target, "id", "")))
                if isinstance(target, ast.Name) and new is not None:
                    spots.append((target.lineno, target.col_offset, target.id, new))
    for found in ast.walk(tree):
        if isinstance(found, ast.Attribute) and isinstance(found.value, ast.Name):
            new = renames.get((found.value.id, found.attr))
            if new is not None and found.end_lineno is not None:
                end = found.end_col_offset or 0
                spots.append((found.end_lineno, end - len(found.attr), found.attr, new))
    lines = [line.encode() for line in code.splitlines(keepends=True)]
    for line, col, old, new in sorted(spots, reverse=True):
        text = lines[line - 1]
        if text[col : col + len(old)] == old.encode():  # ast's columns count bytes
            lines[line - 1] = text[:col] + new.encode() + text[col + len(old) :]
    return b"".join(lines).decode()
