"""The generator's intermediate representation: small frozen records, rendered 1:1."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpgen_codegen.config import Direction, Role


@dataclass(frozen=True)
class T:
    """A type expression.

    kind: any | str | int | float | bool | none | ref | list | dict | literal | union,
    plus `site` (an undecided union, only while building).
    """

    kind: str
    name: str = ""
    args: tuple[T, ...] = ()
    values: tuple[Any, ...] = ()

    def refs(self) -> set[str]:
        out = {self.name} if self.kind == "ref" else set()
        for a in self.args:
            out |= a.refs()
        return out


ANY = T("any")


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class FieldIR:
    wire: str
    attr: str
    type: T
    required: bool
    default: Any = NO_DEFAULT  # a value written on encode and used when absent
    factory: str | None = None  # absent decodes to `factory()` (e.g. "dict": an empty object)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


@dataclass(frozen=True)
class StructIR:
    name: str
    fields: tuple[FieldIR, ...]
    origin: str  # where in the schema it comes from, for the docstring
    anchor: str  # definition name the spec page anchors
    tag_field: str | None = None
    tag: str | int | None = None
    base: str | None = None  # a variant: subclass of this struct, redefining `fields` only
    note: str = ""  # what the docstring says it is, when `origin` cannot say it

    def refs(self) -> set[str]:
        out: set[str] = set() if self.base is None else {self.base}
        for f in self.fields:
            out |= f.type.refs()
        return out

    def shape_key(self) -> tuple[Any, ...]:
        """Everything that matters for identity across modules, minus documentation."""
        return (self.name, self.fields, self.tag_field, self.tag, self.base)


@dataclass(frozen=True)
class AliasIR:
    name: str
    type: T
    origin: str
    anchor: str
    documentation_only: bool = False  # a context-dependent union: not a decode target

    def refs(self) -> set[str]:
        return self.type.refs()

    def shape_key(self) -> tuple[Any, ...]:
        return (self.name, self.type, self.documentation_only)


@dataclass(frozen=True)
class MethodIR:
    method: str
    kind: str  # "request" | "notification"
    direction: Direction
    message: str
    params: str | None
    params_required: bool
    result: str | None
    input_required: bool
    cacheable: bool


@dataclass(frozen=True)
class ModuleIR:
    version: str
    role: Role
    module: str
    spec_url: str
    doc_url: str
    source: str  # repo@commit:path
    sha256: str
    structs: tuple[StructIR, ...]
    aliases: tuple[AliasIR, ...]  # in dependency order
    methods: tuple[MethodIR, ...]
    meta_keys: tuple[tuple[str, str], ...]  # (CONSTANT, key)
    error_codes: tuple[tuple[str, int], ...]
    imports: tuple[str, ...] = ()  # names imported from the extended module
    extends_module: str | None = None
    divergent: tuple[str, ...] = ()  # copies of core definitions that differ from core
    extension_id: str | None = None
    context_dependent: tuple[str, ...] = ()  # documentation-only unions, own and imported
    lenient: tuple[tuple[str, str], ...] = ()  # (method, lenient params variant)
    extended: tuple[str, ...] = ()  # core definitions re-emitted with the extension's keys
    # name -> shape of every definition (not rendered): what an extension that inlines
    # its references is matched against
    shapes: dict[str, Any] = field(default_factory=dict, compare=False)

    def names(self) -> list[str]:
        return sorted(
            [s.name for s in self.structs] + [a.name for a in self.aliases] + list(self.imports)
        )
