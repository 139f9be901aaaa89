"""Steps 3-6 of the pipeline: shapes -> IR.

Inline objects are hoisted to structs named after where they sit (`Parent` + field),
or reuse a named definition of the same shape. Every union gets one strategy:

* tag   - every object member has a required constant under one key with unique
          values: a msgspec tagged union (`tag_field`/`tag` on each member struct);
* merge - object members differ only by which keys they carry: one superset struct,
          lossless, whose keys are required only where every member requires them;
* plain - at most one object-like member: a plain Python union;
* documentation only - listed in the policy: a type alias for readers, while fields
          that hold it decode to plain JSON and the runtime picks the type.

A union that fits none of these stops generation with a message naming the policy
entry to add, so a new construct is never silently mistyped.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, replace
from typing import Any

from mcpgen_codegen.config import GenerationError, Policy
from mcpgen_codegen.ir import ANY, NO_DEFAULT, AliasIR, FieldIR, StructIR, T
from mcpgen_codegen.shapes import (
    AnyShape,
    Arr,
    Lit,
    Map,
    Obj,
    Ref,
    Scalar,
    Shape,
    Union,
    canonical,
    pascal,
)


@dataclass
class _Site:
    key: str
    ctx: str
    members: tuple[T, ...]
    named: str | None
    origin: str
    anchor: str
    decided: T | None = None
    documentation_only: bool = False


class Builder:
    def __init__(
        self,
        shapes: dict[str, Shape],
        policy: Policy,
        reuse: tuple[dict[str, Shape], dict[str, StructIR]] | None = None,
    ) -> None:
        """`reuse`: for a schema that inlines every reference (the MCP Apps schema), the
        extended core's shapes and structs; an inline object or union equal (references
        expanded) to a named definition, this schema's own or the core's, becomes a
        reference to it instead of a new struct."""
        self.shapes = shapes
        self.policy = policy
        self.reuse = reuse
        self.by_expanded: dict[Shape, str] = {}
        self.structs: dict[str, StructIR] = {}
        self.aliases: dict[str, AliasIR] = {}
        self.by_shape: dict[Shape, str] = {}
        self.sites: dict[str, _Site] = {}
        self.named_sites: dict[str, str] = {}  # union definition name -> site key
        self.taken: set[str] = set(shapes)
        self.merged: dict[str, str] = {}  # member key -> merged struct name
        self.recursive = _recursive_defs(shapes)

    # -- pass 1: definitions to structs, aliases and undecided union sites ----------------
    def build(self) -> tuple[list[StructIR], list[AliasIR]]:
        for name in sorted(self.shapes):
            shape = self.shapes[name]
            if isinstance(shape, Obj | Union):
                self.by_shape.setdefault(shape, name)
        if self.reuse is not None:
            for source in (self.shapes, self.reuse[0]):
                for name in sorted(source):
                    if isinstance(source[name], Obj | Union) and _worth_reusing(source[name]):
                        self.by_expanded.setdefault(canonical(source[name], source), name)
        for name in sorted(self.shapes):
            self.define(name)
        for key in sorted(self.sites, key=self._site_order):
            self.decide(self.sites[key])
        return self.finish()

    def define(self, name: str) -> None:
        shape = self.shapes[name]
        if name in self.recursive:
            self.aliases[name] = AliasIR(name, self.recursive_type(shape), name, name)
        elif isinstance(shape, Obj):
            self.structs[name] = self.make_struct(name, shape, origin=name, anchor=name)
        elif isinstance(shape, Union):
            t = self.union(shape, ctx=name, origin=name, anchor=name, named=name)
            self.aliases[name] = AliasIR(name, t, name, name)
        else:
            self.aliases[name] = AliasIR(name, self.type_of(shape, name, name, name), name, name)

    def recursive_type(self, shape: Shape) -> T:
        if isinstance(shape, Arr):
            return T("list", args=(ANY,))
        if isinstance(shape, Map):
            return T("dict", args=(ANY,))
        return ANY

    def make_struct(self, name: str, obj: Obj, origin: str, anchor: str) -> StructIR:
        fields: list[FieldIR] = []
        attrs: set[str] = set()
        for wire, shape in obj.props:
            t = self.type_of(shape, name + pascal(wire), f"{origin}.{wire}", anchor)
            required = wire in obj.required
            default: Any = NO_DEFAULT
            if t.kind == "literal" and len(t.values) == 1 and required:
                default = t.values[0]
            elif wire in self.policy.defaults and t.kind == "str":
                default = self.policy.defaults[wire]
            attr = attr_name(wire)
            while attr in attrs:
                attr += "_"
            attrs.add(attr)
            fields.append(FieldIR(wire, attr, t, required, default))
        return StructIR(name, tuple(fields), origin, anchor)

    def type_of(self, shape: Shape, ctx: str, origin: str, anchor: str, variant: bool = False) -> T:
        if isinstance(shape, AnyShape):
            return ANY
        if isinstance(shape, Scalar):
            if shape.kind == "float":
                # JSON `number`: keep integers integral so `50` round-trips as `50`.
                return T("union", args=(T("int"), T("float")))
            return T(shape.kind)
        if isinstance(shape, Lit):
            return T("literal", values=shape.values)
        if isinstance(shape, Ref):
            if shape.name in self.recursive:
                return self.recursive_type(self.shapes[shape.name])
            return T("ref", shape.name)
        if isinstance(shape, Arr):
            return T("list", args=(self.type_of(shape.item, ctx + "Item", origin + "[]", anchor),))
        if isinstance(shape, Map):
            return T(
                "dict", args=(self.type_of(shape.value, ctx + "Value", origin + "{}", anchor),)
            )
        reused = self.reused(shape)
        if reused is not None:
            return reused
        if isinstance(shape, Obj):
            # An inline object reuses a named definition of the same shape only where
            # that recovers the source's intent: as a union variant (a generator inlined
            # `A | B`), or as a copy of the very definition its position is named after.
            # Elsewhere equal shapes keep their own names (`PingRequest.params` is not a
            # `Result`, whatever its keys).
            if self.shapes.get(ctx) == shape:
                return T("ref", ctx)
            known = self.by_shape.get(shape)
            if known is not None and variant:
                return T("ref", known)
            name = self.fresh(ctx)
            if self.reuse is not None and _worth_reusing(shape):
                # later inline copies of this very object refer to this one
                self.by_expanded.setdefault(canonical(shape, self.shapes), name)
            self.structs[name] = self.make_struct(name, shape, origin, anchor)
            return T("ref", name)
        known = self.by_shape.get(shape)
        if known is not None:
            return T("ref", known)
        return self.union(shape, ctx, origin, anchor, named=None)

    def reused(self, shape: Shape) -> T | None:
        if self.reuse is None or not isinstance(shape, Obj | Union):
            return None
        known = self.by_expanded.get(canonical(shape, self.shapes))
        if known is None:
            return None
        core_structs = self.reuse[1]
        if known not in self.shapes and known in core_structs:
            # the core's struct, for union decisions; imported when unchanged
            self.structs.setdefault(known, core_structs[known])
        return T("ref", known)

    def union(self, shape: Union, ctx: str, origin: str, anchor: str, named: str | None) -> T:
        members = []
        for i, member in enumerate(shape.members):
            mctx = ctx + _variant_suffix(member, i, self.policy.tag_preference)
            members.append(self.type_of(member, mctx, origin, anchor, variant=True))
        key = named or f"~{ctx}"
        while key in self.sites:
            key += "'"
        self.sites[key] = _Site(key, ctx, tuple(members), named, origin, anchor)
        if named:
            self.named_sites[named] = key
        return T("site", key)

    def fresh(self, name: str) -> str:
        base, n = name, 2
        while name in self.taken:
            name = f"{base}{n}"
            n += 1
        self.taken.add(name)
        return name

    # -- pass 2: decide every union --------------------------------------------------------
    @staticmethod
    def _site_order(key: str) -> tuple[int, str]:
        return (1 if key.startswith("~") else 0, key)

    def expand(self, members: tuple[T, ...]) -> list[T]:
        """Inline members that are themselves (non documentation-only) named unions."""
        out: list[T] = []
        for m in members:
            site_key = self.named_sites.get(m.name) if m.kind == "ref" else None
            if m.kind == "site":
                site_key = m.name
            if site_key is not None:
                site = self.sites[site_key]
                self.decide(site)
                if not site.documentation_only and site.decided is not None:
                    if site.decided.kind == "union":
                        out.extend(x for x in site.decided.args if x not in out)
                        continue
                    if site.decided.kind != "ref" or site.decided.name != site.named:
                        out.append(site.decided)
                        continue
            if m not in out:
                out.append(m)
        return out

    def is_struct(self, t: T) -> bool:
        return t.kind == "ref" and t.name in self.structs

    def object_like(self, t: T) -> bool:
        if t.kind == "dict" or self.is_struct(t):
            return True
        if t.kind == "ref" and t.name in self.named_sites:
            site = self.sites[self.named_sites[t.name]]
            self.decide(site)
            return site.documentation_only and self.fallback(site).kind == "dict"
        if t.kind == "ref" and t.name in self.aliases:
            return self.object_like(self.aliases[t.name].type)
        return False

    def decide(self, site: _Site) -> None:
        if site.decided is not None:
            return
        site.decided = ANY  # guards re-entry through recursive definitions
        label = site.named or site.ctx
        members = self.expand(site.members)
        objects = [m for m in members if self.object_like(m)]
        others = [m for m in members if not self.object_like(m)]
        if label in self.policy.documentation_only:
            site.documentation_only = True
            site.decided = T("union", args=tuple(site.members))
            return
        if len(objects) <= 1:
            site.decided = members[0] if len(members) == 1 else T("union", args=tuple(members))
            return
        if all(self.is_struct(m) for m in objects):
            if self.try_tag([m.name for m in objects]):
                site.decided = T("union", args=tuple(members))
                return
            merged = self.try_merge([m.name for m in objects], site)
            if merged is not None:
                ref = T("ref", merged)
                site.decided = ref if not others else T("union", args=(ref, *others))
                return
        names = ", ".join(_render_short(m) for m in members)
        raise GenerationError(
            f"union {label} ({names}) can be neither tagged nor merged losslessly; "
            f"if its variant depends on context, add {label!r} to "
            "[unions].documentation_only in schema/policy.toml"
        )

    def consts(self, name: str) -> dict[str, str | int]:
        s = self.structs[name]
        out: dict[str, str | int] = {}
        for f in s.fields:
            if f.required and f.type.kind == "literal" and len(f.type.values) == 1:
                value = f.type.values[0]
                if isinstance(value, str | int) and not isinstance(value, bool):
                    out[f.wire] = value
        if s.tag_field is not None and s.tag is not None:
            out[s.tag_field] = s.tag
        return out

    def try_tag(self, names: list[str]) -> bool:
        consts = [self.consts(n) for n in names]
        common = set(consts[0]).intersection(*consts[1:])
        order = [k for k in self.policy.tag_preference if k in common] + sorted(
            common - set(self.policy.tag_preference)
        )
        for key in order:
            values = [c[key] for c in consts]
            if len(set(values)) != len(values):
                continue
            if any(self.structs[n].tag_field not in (None, key) for n in names):
                continue
            for n, value in zip(names, values, strict=True):
                s = self.structs[n]
                if s.tag_field is None:
                    fields = tuple(f for f in s.fields if f.wire != key)
                    self.structs[n] = replace(s, fields=fields, tag_field=key, tag=value)
            return True
        return False

    def wire_fields(self, name: str) -> list[FieldIR]:
        s = self.structs[name]
        fields = list(s.fields)
        if s.tag_field is not None:
            lit = T("literal", values=(s.tag,))
            fields.insert(0, FieldIR(s.tag_field, attr_name(s.tag_field), lit, True, s.tag))
        return fields

    def try_merge(self, names: list[str], site: _Site) -> str | None:
        key = "|".join(sorted(names))
        if key in self.merged:
            return self.merged[key]
        merged: dict[str, FieldIR] = {}
        counts: dict[str, int] = {}
        for n in names:
            for f in self.wire_fields(n):
                counts[f.wire] = counts.get(f.wire, 0) + (1 if f.required else 0)
                old = merged.get(f.wire)
                if old is None:
                    merged[f.wire] = f
                    continue
                t = self.merge_types(old.type, f.type)
                if t is None:
                    return None
                default = old.default if old.default == f.default else NO_DEFAULT
                merged[f.wire] = replace(old, type=t, default=default)
        fields = []
        attrs: set[str] = set()
        for f in merged.values():
            required = counts[f.wire] == len(names)
            attr = f.attr
            while attr in attrs:
                attr += "_"
            attrs.add(attr)
            f = replace(f, attr=attr)  # noqa: PLW2901
            default = f.default
            if not required or (f.type.kind == "literal" and len(f.type.values) != 1):
                default = NO_DEFAULT  # a key some member lacks must not be invented
            fields.append(replace(f, required=required, default=default))
        name = self.policy.merged_names.get(key)
        if name is None:
            name = site.named if site.named else self.fresh(site.ctx)
        elif name in self.taken and name not in self.merged.values():
            raise GenerationError(f"merged name {name!r} from the policy is already taken")
        self.taken.add(name)
        origin = "merge of " + " | ".join(names)
        self.structs[name] = StructIR(name, tuple(fields), origin, site.anchor)
        self.merged[key] = name
        return name

    def merge_types(self, a: T, b: T) -> T | None:
        """The type of a key two merged members both carry, or None if they disagree."""
        if a == b:
            return a
        if a.kind == "literal" and b.kind == "literal":
            values = list(a.values) + [v for v in b.values if v not in a.values]
            return T("literal", values=tuple(values))
        if self.is_struct(a) and self.is_struct(b):
            sa, sb = self.structs[a.name], self.structs[b.name]
            if (sa.fields, sa.tag_field, sa.tag) == (sb.fields, sb.tag_field, sb.tag):
                return a  # two hoisted copies of one inline shape
        if a.kind == b.kind and a.kind in ("list", "dict"):
            inner = self.merge_types(a.args[0], b.args[0])
            return None if inner is None else replace(a, args=(inner,))
        return None

    def fallback(self, site: _Site) -> T:
        members = self.expand(site.members)
        if all(self.object_like(m) for m in members):
            return T("dict", args=(ANY,))
        return ANY

    # -- pass 3: substitute decisions ------------------------------------------------------
    def resolve(self, t: T, top: bool = False) -> T:
        if t.kind == "site":
            site = self.sites[t.name]
            assert site.decided is not None
            if site.documentation_only and not top:
                return self.fallback(site)
            return self.resolve(site.decided, top=top and site.documentation_only)
        if t.kind == "ref" and t.name in self.named_sites and not top:
            site = self.sites[self.named_sites[t.name]]
            if site.documentation_only:
                return self.fallback(site)
        if t.args:
            return replace(t, args=tuple(self.resolve(a) for a in t.args))
        return t

    def finish(self) -> tuple[list[StructIR], list[AliasIR]]:
        aliases: list[AliasIR] = []
        for name, alias in self.aliases.items():
            if alias.type.kind == "site":
                site = self.sites[alias.type.name]
                if site.decided == T("ref", name) and name in self.structs:
                    continue  # merged into a struct of the same name
                t = self.resolve(alias.type, top=True)
                aliases.append(replace(alias, type=t, documentation_only=site.documentation_only))
            else:
                aliases.append(replace(alias, type=self.resolve(alias.type)))
        structs = []
        for s in self.structs.values():
            fields = tuple(replace(f, type=self.resolve(f.type)) for f in s.fields)
            structs.append(replace(s, fields=fields))
        structs = self.prune(structs, aliases)
        structs.sort(key=lambda s: s.name)
        return structs, _alias_order(aliases)

    def prune(self, structs: list[StructIR], aliases: list[AliasIR]) -> list[StructIR]:
        """Drop hoisted structs nothing refers to (inline variants merged away)."""
        by_name = {s.name: s for s in structs}
        live: set[str] = set()
        todo = [n for n in by_name if n in self.shapes]
        for a in aliases:
            todo.extend(a.refs())
        while todo:
            name = todo.pop()
            if name in live or name not in by_name:
                continue
            live.add(name)
            todo.extend(by_name[name].refs())
        return [s for s in structs if s.name in live]


def _worth_reusing(shape: Shape) -> bool:
    """Equal shapes name the same thing only when there is enough of them: an object of
    one or two optional keys (`{_meta}`) matches too many unrelated definitions."""
    if isinstance(shape, Union):
        return True
    assert isinstance(shape, Obj)
    return len(shape.props) >= 3 or bool(shape.required)


def _variant_suffix(member: Shape, index: int, preference: tuple[str, ...]) -> str:
    if isinstance(member, Obj):
        for key in preference:
            prop = member.prop(key)
            if key in member.required and isinstance(prop, Lit) and len(prop.values) == 1:
                return pascal(str(prop.values[0]).replace("_", "-"))
        return f"Variant{index + 1}"
    return ""


def _recursive_defs(shapes: dict[str, Shape]) -> set[str]:
    """Non-struct definitions that reach themselves (e.g. JSONValue <-> JSONObject)."""

    def refs(shape: Shape) -> set[str]:
        if isinstance(shape, Ref):
            return {shape.name}
        if isinstance(shape, Arr):
            return refs(shape.item)
        if isinstance(shape, Map):
            return refs(shape.value)
        if isinstance(shape, Union):
            out: set[str] = set()
            for m in shape.members:
                out |= refs(m)
            return out
        return set()  # objects break cycles: msgspec structs may be recursive

    graph = {n: refs(s) for n, s in shapes.items() if not isinstance(s, Obj)}

    def reaches_itself(start: str, removed: set[str]) -> bool:
        stack, seen = [r for r in graph[start] if r not in removed], set()
        while stack:
            n = stack.pop()
            if n == start:
                return True
            if n in seen or n not in graph or n in removed:
                continue
            seen.add(n)
            stack.extend(graph[n])
        return False

    cyclic = {n for n in graph if reaches_itself(n, set())}
    # Break cycles at their unions first (they become Any); maps and arrays then close.
    # A cycle without a union (A = list[A]) is broken at every definition in it.
    out = {n for n in cyclic if isinstance(shapes[n], Union)}
    out |= {n for n in sorted(cyclic - out) if reaches_itself(n, out)}
    return out


def _alias_order(aliases: list[AliasIR]) -> list[AliasIR]:
    """Aliases are evaluated at import time: emit each after the aliases it names."""
    by_name = {a.name: a for a in aliases}
    done: list[AliasIR] = []
    seen: set[str] = set()

    def visit(a: AliasIR) -> None:
        if a.name in seen:
            return
        seen.add(a.name)
        for r in sorted(a.refs()):
            if r in by_name:
                visit(by_name[r])
        done.append(a)

    for a in sorted(aliases, key=lambda a: a.name):
        visit(a)
    return done


_CAMEL_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_2 = re.compile(r"([a-z0-9])([A-Z])")


def attr_name(wire: str) -> str:
    """Wire key -> snake_case attribute: `mimeType` -> `mime_type`, `_meta` -> `meta`,
    `io.modelcontextprotocol/protocolVersion` -> `protocol_version`, `from` -> `from_`."""
    name = wire.rsplit("/", 1)[-1] or wire
    name = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_") or "field"
    name = _CAMEL_2.sub(r"\1_\2", _CAMEL_1.sub(r"\1_\2", name)).lower()
    if name[0].isdigit():
        name = "n_" + name
    if keyword.iskeyword(name):
        name += "_"
    return name


def _render_short(t: T) -> str:
    if t.kind in ("ref", "site"):
        return t.name.lstrip("~")
    if t.args:
        return f"{t.kind}[{', '.join(_render_short(a) for a in t.args)}]"
    return t.kind
