"""Step 1 of lowering: JSON Schema nodes -> small, hashable, context-free shapes.

A shape is what a schema node means for a typed decoder, nothing more: documentation
keywords are dropped, `allOf` is flattened (distributing over nested `anyOf`),
`const`/`enum` become literals, objects without named keys (or named open by the
policy) become maps. Shapes compare structurally, which is how inline objects are
matched against named definitions later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpgen_codegen.config import GenerationError, Policy


@dataclass(frozen=True)
class AnyShape:
    pass


@dataclass(frozen=True)
class Scalar:
    kind: str  # "str" | "int" | "float" | "bool" | "none"


@dataclass(frozen=True)
class Lit:
    values: tuple[str | int | bool, ...]


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Arr:
    item: Shape


@dataclass(frozen=True)
class Map:
    value: Shape


@dataclass(frozen=True)
class Obj:
    props: tuple[tuple[str, Shape], ...]
    required: frozenset[str]

    def prop(self, wire: str) -> Shape | None:
        for name, shape in self.props:
            if name == wire:
                return shape
        return None


@dataclass(frozen=True)
class Union:
    members: tuple[Shape, ...]


Shape = AnyShape | Scalar | Lit | Ref | Arr | Map | Obj | Union

ANY = AnyShape()
OPEN_MAP = Map(ANY)

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "none"}
# Keywords that carry no meaning for a decoder (annotations, validation we do not emit).
_IGNORED = {
    "description", "title", "$schema", "$id", "$comment", "examples", "default", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "pattern", "propertyNames", "deprecated", "readOnly", "writeOnly",
    "multipleOf", "uniqueItems", "contentEncoding", "contentMediaType",
}  # fmt: skip


class Normalizer:
    """Turns the definitions of one schema into shapes."""

    def __init__(self, defs: dict[str, Any], ref_prefix: str, policy: Policy) -> None:
        self.defs = defs
        self.ref_prefix = ref_prefix
        self.policy = policy

    def ref_name(self, ref: str) -> str:
        if not ref.startswith(self.ref_prefix):
            raise GenerationError(f"unsupported $ref {ref!r} (only local {self.ref_prefix}Name)")
        name = ref[len(self.ref_prefix) :]
        if name not in self.defs:
            raise GenerationError(f"$ref to unknown definition {name!r}")
        return name

    def definition(self, name: str) -> Shape:
        return self.node(self.defs[name], owner=name)

    def node(self, node: Any, owner: str) -> Shape:
        if node is True:
            return ANY
        if not isinstance(node, dict):
            raise GenerationError(f"{owner}: schema node {node!r} is not an object")
        keys = {k for k in node if k not in _IGNORED}
        if not keys:
            return ANY
        if "$ref" in node:
            return Ref(self.ref_name(node["$ref"]))
        if "allOf" in node:
            rest = {k: v for k, v in node.items() if k != "allOf"}
            parts = list(node["allOf"])
            if set(rest) - _IGNORED:
                parts.insert(0, rest)
            return self.all_of(parts, owner)
        for key in ("anyOf", "oneOf"):
            if key in node:
                rest = {k: v for k, v in node.items() if k != key}
                union = Union(tuple(self.node(m, owner) for m in node[key]))
                if set(rest) - _IGNORED - {"type"}:
                    return self.intersect_all([self.node(rest, owner), union], owner)
                return simplify(union)
        if "const" in node:
            return Lit((node["const"],))
        if "enum" in node:
            return Lit(tuple(node["enum"]))
        kind = node.get("type")
        if isinstance(kind, list):
            return simplify(Union(tuple(self.node({**node, "type": k}, owner) for k in kind)))
        if kind in _SCALARS:
            return Scalar(_SCALARS[kind])
        if kind == "array":
            items = node.get("items")
            return Arr(self.node(items, owner + "Item") if items is not None else ANY)
        if kind == "object" or "properties" in node or "additionalProperties" in node:
            return self.obj(node, owner)
        raise GenerationError(f"{owner}: cannot lower schema node with keys {sorted(keys)}")

    def obj(self, node: dict[str, Any], owner: str) -> Shape:
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if not props:
            if extra is False or extra == {"not": {}}:
                return Obj((), frozenset())  # an object that admits no keys at all
            if isinstance(extra, dict) and (set(extra) - _IGNORED):
                return Map(self.node(extra, owner + "Value"))
            return OPEN_MAP
        out: list[tuple[str, Shape]] = []
        for wire, sub in props.items():
            if sub is False or sub == {"not": {}}:
                continue  # a key that may never be present: no field at all
            if wire in self.policy.open_properties or f"{owner}.{wire}" in self.policy.open_fields:
                out.append((wire, OPEN_MAP))
            else:
                out.append((wire, self.node(sub, owner + pascal(wire))))
        required = frozenset(node.get("required", ()))
        unknown = required - set(props)
        if unknown:
            raise GenerationError(f"{owner}: required keys {sorted(unknown)} are not properties")
        return Obj(tuple(out), required)

    # -- allOf ---------------------------------------------------------------------------
    def deref(self, shape: Shape) -> Shape:
        seen = set()
        while isinstance(shape, Ref):
            if shape.name in seen:
                raise GenerationError(f"allOf through a $ref cycle at {shape.name}")
            seen.add(shape.name)
            shape = self.definition(shape.name)
        return shape

    def all_of(self, parts: list[Any], owner: str) -> Shape:
        return self.intersect_all([self.node(p, owner) for p in parts], owner)

    def intersect_all(self, shapes: list[Shape], owner: str) -> Shape:
        resolved = [self.deref(s) for s in shapes]
        for i, shape in enumerate(resolved):
            if isinstance(shape, Union):
                # allOf[A, anyOf[B1..Bn]] == anyOf[A&B1 .. A&Bn]
                others = resolved[:i] + resolved[i + 1 :]
                return simplify(
                    Union(tuple(self.intersect_all([*others, m], owner) for m in shape.members))
                )
        out: Shape = ANY
        for shape in resolved:
            out = self.intersect(out, shape, owner)
        return out

    def intersect(self, a: Shape, b: Shape, owner: str) -> Shape:
        if a == b:
            return a
        if a in (ANY, OPEN_MAP) and (b == ANY or isinstance(b, Obj | Map | Union)):
            return b
        if b in (ANY, OPEN_MAP) and isinstance(a, Obj | Map | Union):
            return a
        if isinstance(a, Ref) or isinstance(b, Ref):
            return self.intersect(self.deref(a), self.deref(b), owner)
        if isinstance(a, Lit) and isinstance(b, Scalar | Lit):
            return _lit_and(a, b, owner)
        if isinstance(b, Lit) and isinstance(a, Scalar):
            return _lit_and(b, a, owner)
        if isinstance(a, Obj) and isinstance(b, Obj):
            props = dict(a.props)
            for wire, shape in b.props:
                props[wire] = self.intersect(props[wire], shape, owner) if wire in props else shape
            return Obj(tuple(props.items()), a.required | b.required)
        raise GenerationError(f"{owner}: allOf combines incompatible schemas {a} and {b}")


_PY_OF: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
}


def _lit_and(lit: Lit, other: Scalar | Lit, owner: str) -> Lit:
    if isinstance(other, Lit):
        values = tuple(v for v in lit.values if v in other.values)
    else:
        py = _PY_OF.get(other.kind)
        values = tuple(
            v
            for v in lit.values
            if py is not None
            and isinstance(v, py)
            and not (isinstance(v, bool) and other.kind != "bool")
        )
    if not values:
        raise GenerationError(f"{owner}: allOf leaves no value for {lit} and {other}")
    return Lit(values)


def canonical(shape: Shape, shapes: dict[str, Shape], stack: tuple[str, ...] = ()) -> Shape:
    """A key for "means the same": every `Ref` replaced by what it names (except a
    definition that reaches itself), keys, literal values and union members in one
    order. It is the form in which an emitter that inlines every reference (Zod's)
    writes a definition, so such copies can be matched against named definitions."""
    if isinstance(shape, Ref):
        if shape.name in stack or shape.name not in shapes:
            return shape
        return canonical(shapes[shape.name], shapes, (*stack, shape.name))
    if isinstance(shape, Arr):
        return Arr(canonical(shape.item, shapes, stack))
    if isinstance(shape, Map):
        return Map(canonical(shape.value, shapes, stack))
    if isinstance(shape, Lit):
        return Lit(tuple(sorted(shape.values, key=repr)))
    if isinstance(shape, Obj):
        props = sorted((wire, canonical(sub, shapes, stack)) for wire, sub in shape.props)
        return Obj(tuple(props), shape.required)
    if isinstance(shape, Union):
        return Union(tuple(sorted((canonical(m, shapes, stack) for m in shape.members), key=repr)))
    return shape


def simplify(union: Union) -> Shape:
    """Flatten nested unions, fold literals together, drop duplicates and `Any`."""
    flat: list[Shape] = []

    def add(shape: Shape) -> None:
        if isinstance(shape, Union):
            for m in shape.members:
                add(m)
        elif shape not in flat:
            flat.append(shape)

    add(union)
    if ANY in flat:
        return ANY
    lits = [s for s in flat if isinstance(s, Lit)]
    if len(lits) > 1:
        values: list[str | int | bool] = []
        for lit in lits:
            values.extend(v for v in lit.values if v not in values)
        first = flat.index(lits[0])
        flat = [s for s in flat if not isinstance(s, Lit)]
        flat.insert(first, Lit(tuple(values)))
    if len(flat) == 1:
        return flat[0]
    return Union(tuple(flat))


def pascal(wire: str) -> str:
    """`inputSchema` -> `InputSchema`, `$schema` -> `Schema`, `a/b-c` -> `ABC`."""
    parts = [p for p in _split(wire) if p]
    return "".join(p[0].upper() + p[1:] for p in parts) or "Field"


def _split(text: str) -> list[str]:
    out, cur = [], ""
    for ch in text:
        if ch.isalnum():
            cur += ch
        else:
            out.append(cur)
            cur = ""
    out.append(cur)
    return out
