"""The whole pipeline for one revision: load -> patch (and add policy keys) -> shapes ->
IR -> tables.

`build_module` is a pure function of (schema document, pin, patches, policy, and for
an extension the IR of the revision it extends), which is what the golden tests and
`mcpgen regenerate` both call.
"""

from __future__ import annotations

from typing import Any

from mcpgen_codegen.config import GenerationError, Patch, Pin, Policy
from mcpgen_codegen.hoist import hoist_local_definitions
from mcpgen_codegen.ir import AliasIR, ModuleIR, StructIR
from mcpgen_codegen.lower import Builder
from mcpgen_codegen.patching import add_properties, apply_patches
from mcpgen_codegen.shapes import Normalizer, Shape
from mcpgen_codegen.tables import build_methods, collect_error_codes, collect_meta_keys
from mcpgen_codegen.variants import extend_core, lenient_variants


def definitions(schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The definitions container: `$defs` (2020-12) or `definitions` (draft-07)."""
    if "$defs" in schema:
        return schema["$defs"], "#/$defs/"
    if "definitions" in schema:
        return schema["definitions"], "#/definitions/"
    raise GenerationError("schema has neither `$defs` nor `definitions`")


def build_module(
    schema: dict[str, Any],
    pin: Pin,
    patches: tuple[Patch, ...],
    policy: Policy,
    core: ModuleIR | None = None,
) -> ModuleIR:
    schema = apply_patches(schema, pin.version, patches)
    if policy.added.get(pin.role):
        schema = add_properties(schema, pin.version, policy.added[pin.role])
    defs, prefix = definitions(schema)
    defs = hoist_local_definitions(defs, prefix, policy.local_definitions)
    normalizer = Normalizer(defs, prefix, policy)
    shapes: dict[str, Shape] = {name: normalizer.definition(name) for name in defs}
    reuse = None
    if core is not None and pin.version in policy.reuse_shapes:
        reuse = (core.shapes, {s.name: s for s in core.structs})
    builder = Builder(shapes, policy, reuse)
    structs, aliases = builder.build()
    methods = build_methods(shapes, {s.name: s for s in structs}, policy)
    imports: tuple[str, ...] = ()
    divergent: tuple[str, ...] = ()
    extended: tuple[str, ...] = ()
    context_dependent = {a.name for a in aliases if a.documentation_only}
    if core is not None:
        structs, aliases, imports, divergent = _share_with_core(structs, aliases, core)
        # The extension's table lists only its own methods; copies of core methods
        # (embedded input requests) stay in the core module's table.
        methods = [m for m in methods if m.message not in imports]
        entry = policy.extend.get(pin.version)
        if entry:
            structs, imports, copied, extended = extend_core(
                pin.version, structs, aliases, imports, core, entry
            )
            methods = sorted([*methods, *copied], key=lambda m: m.method)
        # a method row may name a core definition (a result the extension's schema lacks)
        local = {s.name for s in structs} | {a.name for a in aliases}
        core_names = {s.name for s in core.structs} | {a.name for a in core.aliases}
        named = {n for m in methods for n in (m.message, m.params, m.result) if n is not None}
        imports = tuple(sorted(set(imports) | ((named - local) & core_names)))
        context_dependent |= set(imports) & set(core.context_dependent)
    variants, lenient = lenient_variants(structs, methods, pin.role, policy)
    return ModuleIR(
        version=pin.version,
        role=pin.role,
        module=pin.module,
        spec_url=pin.spec_url,
        doc_url=pin.doc_url,
        source=f"{pin.repo}@{pin.commit}:{pin.path}",
        sha256=pin.sha256,
        structs=tuple(structs) + tuple(variants),
        aliases=tuple(aliases),
        methods=tuple(methods),
        meta_keys=tuple(collect_meta_keys(defs)),
        error_codes=tuple(collect_error_codes(shapes, pin.role, policy)),
        imports=imports,
        extends_module=core.module if core is not None else None,
        divergent=divergent,
        extension_id=pin.extension_id,
        context_dependent=tuple(sorted(context_dependent)),
        lenient=tuple(lenient),
        extended=extended,
        shapes=shapes,
    )


def _share_with_core(
    structs: list[StructIR], aliases: list[AliasIR], core: ModuleIR
) -> tuple[list[StructIR], list[AliasIR], tuple[str, ...], tuple[str, ...]]:
    """Import every definition identical to the core's (transitively); report the rest.

    A definition is shared only when its own IR equals the core's *and* every name it
    refers to is shared too, so an imported class never points at a diverged type.
    """
    core_items: dict[str, Any] = {s.name: s.shape_key() for s in core.structs}
    core_items.update({a.name: a.shape_key() for a in core.aliases})
    mine: dict[str, StructIR | AliasIR] = {s.name: s for s in structs}
    mine.update({a.name: a for a in aliases})
    shared = {n for n, item in mine.items() if core_items.get(n) == item.shape_key()}
    # Core names this module refers to without a copy of its own (an extension that
    # reuses the core's definitions): imported as they are.
    outside = set(core_items) - set(mine)
    changed = True
    while changed:
        changed = False
        for n in sorted(shared):
            if not mine[n].refs() <= shared | outside:
                shared.discard(n)
                changed = True
    divergent = tuple(sorted(n for n in mine if n in core_items and n not in shared))
    kept_structs = [s for s in structs if s.name not in shared]
    kept_aliases = [a for a in aliases if a.name not in shared]
    used: set[str] = set()
    for struct in kept_structs:
        used |= struct.refs()
    for alias in kept_aliases:
        used |= alias.refs()
    return (
        kept_structs,
        kept_aliases,
        tuple(sorted(shared | (used & outside))),
        divergent,
    )
