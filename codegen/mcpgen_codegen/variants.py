"""Definitions the schemas imply but do not spell out, from `[lenient]` and `[extensions]`
in the policy.

* Lenient params: a legacy (initialize-era) request carries no `_meta`, yet the server
  serves it with the modern params types. For each request whose params struct requires
  one of the policy's keys, a subclass `<Params><suffix>` lets the key be absent (it
  decodes to an empty object); the module's `LENIENT_PARAMS` maps the method to it.
* Extended core definitions: an extension's prose may add keys to a core definition
  while its schema names them only in a definition of its own (Tasks adds `taskIds` to
  the subscription filter). The extension module then emits the core definition under
  its core name with those keys added, plus a copy of every core struct that holds it
  (transitively), and lists the copied methods in its own `METHODS`, so that
  `ext.SubscriptionsListenRequestParams` is the listen request as the extension reads it.
"""

from __future__ import annotations

from dataclasses import replace

from mcpgen_codegen.config import GenerationError, Policy, Role
from mcpgen_codegen.ir import NO_DEFAULT, AliasIR, FieldIR, MethodIR, ModuleIR, StructIR


def lenient_variants(
    structs: list[StructIR], methods: list[MethodIR], role: Role, policy: Policy
) -> tuple[list[StructIR], list[tuple[str, str]]]:
    """(variant structs, (method, variant name) rows) for one module."""
    if role not in policy.lenient_roles or not policy.lenient_keys:
        return [], []
    by_name = {s.name: s for s in structs}
    variants: dict[str, StructIR] = {}
    table: list[tuple[str, str]] = []
    for method in methods:
        params = by_name.get(method.params or "") if method.kind == "request" else None
        if params is None:
            continue  # no params, or a documentation-only union of them
        loose = [f for f in params.fields if f.wire in policy.lenient_keys and f.required]
        if not loose:
            continue
        name = params.name + policy.lenient_suffix
        if name in by_name:
            raise GenerationError(
                f"lenient variant {name} would shadow a definition; change [lenient].suffix"
            )
        if name not in variants:
            variants[name] = StructIR(
                name,
                tuple(_loosen(params.name, f) for f in loose),
                origin=name,
                anchor=params.anchor,
                base=params.name,
                note=f"Legacy-request variant of `{params.name}` ("
                + ", ".join(f"`{f.wire}`" for f in loose)
                + " may be absent)",
            )
        table.append((method.method, name))
    return sorted(variants.values(), key=lambda s: s.name), table


def _loosen(owner: str, f: FieldIR) -> FieldIR:
    if f.type.kind != "dict":
        raise GenerationError(
            f"{owner}.{f.wire}: [lenient].keys must name JSON-object keys (absent -> {{}})"
        )
    return replace(f, required=False, default=NO_DEFAULT, factory="dict")


def extend_core(
    version: str,
    structs: list[StructIR],
    aliases: list[AliasIR],
    imports: tuple[str, ...],
    core: ModuleIR,
    entry: dict[str, tuple[str, ...]],
) -> tuple[list[StructIR], tuple[str, ...], list[MethodIR], tuple[str, ...]]:
    """(structs, imports, copied core methods, extended names) of an extension module."""
    where = f"[extensions.{version}.extend] in schema/policy.toml"
    core_structs = {s.name: s for s in core.structs}
    mine = {s.name: s for s in structs}
    local = set(mine) | {a.name for a in aliases}
    emitted: dict[str, StructIR] = {}
    for name, sources in sorted(entry.items()):
        base = core_structs.get(name)
        if base is None or name in local:
            raise GenerationError(
                f"{where}: {name} must be a struct of {core.version} the extension does not define"
            )
        fields = list(base.fields)
        for source in sources:
            if source not in mine:
                raise GenerationError(f"{where}: {source} is not a struct of {version}")
            fields = _add_fields(name, fields, mine[source].fields)
        emitted[name] = replace(
            base,
            fields=tuple(fields),
            note=f"`{name}` of MCP {core.version} with the keys of "
            + ", ".join(f"`{s}`" for s in sources),
        )
    # Every core struct that holds an extended one, directly or not, is copied too, so
    # that a decode through it reaches the added keys.
    changed = True
    while changed:
        changed = False
        for s in core.structs:
            if s.base is None and s.name not in emitted and s.refs() & set(emitted):
                if s.name in local:
                    raise GenerationError(f"{where}: {s.name} holds an extended definition "
                                          f"but {version} defines its own {s.name}")  # fmt: skip
                held = ", ".join(f"`{n}`" for n in sorted(s.refs() & set(emitted)))
                emitted[s.name] = replace(
                    s, note=f"`{s.name}` of MCP {core.version}, holding this module's {held}"
                )
                changed = True
    for a in core.aliases:
        if a.name in imports and a.refs() & set(emitted):
            raise GenerationError(f"{where}: imported {a.name} refers to an extended definition")
    methods = [m for m in core.methods if m.message in emitted]
    needed = {n for m in methods for n in (m.params, m.result) if n is not None}
    for s in emitted.values():
        needed |= s.refs()
    needed -= set(emitted)
    clash = sorted(needed & local)
    if clash:
        raise GenerationError(f"{where}: copied core structs refer to {clash}, redefined here")
    core_names = set(core_structs) | {a.name for a in core.aliases}
    if not needed <= core_names:
        raise GenerationError(f"{where}: {sorted(needed - core_names)} not in {core.version}")
    out = sorted([*structs, *emitted.values()], key=lambda s: s.name)
    imported = (set(imports) - set(emitted)) | needed
    return out, tuple(sorted(imported)), methods, tuple(sorted(emitted))


def _add_fields(owner: str, fields: list[FieldIR], extra: tuple[FieldIR, ...]) -> list[FieldIR]:
    out = list(fields)
    by_wire = {f.wire: f for f in out}
    attrs = {f.attr for f in out}
    for f in extra:
        have = by_wire.get(f.wire)
        if have is not None:
            if (have.type, have.required) != (f.type, f.required):
                raise GenerationError(f"{owner}.{f.wire}: the added key disagrees with the core")
            continue
        if f.attr in attrs:
            raise GenerationError(f"{owner}: added key {f.wire} clashes on attribute {f.attr}")
        out.append(f)
        by_wire[f.wire] = f
        attrs.add(f.attr)
    return out
