"""Step 8: IR -> Python source through jinja2 templates, formatted by the pinned ruff."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2
from ruff.__main__ import find_ruff_bin  # type: ignore[import-untyped]

from mcpgen_codegen.config import GenerationError, Pin
from mcpgen_codegen.ir import AliasIR, FieldIR, ModuleIR, StructIR, T
from mcpgen_codegen.lower import attr_name

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("mcpgen_codegen", "templates"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,  # Python source, not HTML
)


def py(value: Any) -> str:
    """A Python literal for a JSON scalar."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise GenerationError(f"cannot write {value!r} as a Python literal")


def render_type(t: T) -> str:
    simple = {
        "any": "Any",
        "str": "str",
        "int": "int",
        "float": "float",
        "bool": "bool",
        "none": "None",
    }
    if t.kind in simple:
        return simple[t.kind]
    if t.kind == "ref":
        return t.name
    if t.kind == "list":
        return f"list[{render_type(t.args[0])}]"
    if t.kind == "dict":
        return f"dict[str, {render_type(t.args[0])}]"
    if t.kind == "literal":
        return "Literal[" + ", ".join(py(v) for v in t.values) + "]"
    if t.kind == "union":
        parts = list(dict.fromkeys(_union_leaves(t)))
        parts = [p for p in parts if p != "None"] + (["None"] if "None" in parts else [])
        return " | ".join(parts)
    raise GenerationError(f"unresolved type {t}")


def _union_leaves(t: T) -> list[str]:
    if t.kind == "union":
        return [leaf for a in t.args for leaf in _union_leaves(a)]
    return [render_type(t)]


def field_line(f: FieldIR) -> str:
    annotation = render_type(f.type)
    if f.factory is not None:
        factory = f"default_factory={f.factory}, name={py(f.wire)}"
        return f"{f.attr}: {annotation} = msgspec.field({factory})"
    if f.has_default:
        default = py(f.default)
    elif not f.required:
        annotation += " | UnsetType"
        default = "UNSET"
    else:
        default = None
    if f.wire != f.attr:
        args = ([f"default={default}"] if default is not None else []) + [f"name={py(f.wire)}"]
        return f"{f.attr}: {annotation} = msgspec.field({', '.join(args)})"
    if default is not None:
        return f"{f.attr}: {annotation} = {default}"
    return f"{f.attr}: {annotation}"


def tag_attr(s: StructIR) -> str:
    """The read-only attribute that gives a tagged struct's tag: msgspec keeps the tag in
    the class's config, not in a field, so the generated class exposes it as a property
    (`block.type == "image"`), free per instance and typed as the tag's Literal."""
    assert s.tag_field is not None
    name = attr_name(s.tag_field)
    if any(f.attr == name for f in s.fields):
        raise GenerationError(f"{s.name}: the tag attribute {name!r} is also a field")
    return name


def _types(m: ModuleIR) -> Iterable[T]:
    def walk(t: T) -> Iterable[T]:
        yield t
        for a in t.args:
            yield from walk(a)

    for s in m.structs:
        for f in s.fields:
            yield from walk(f.type)
    for a in m.aliases:
        yield from walk(a.type)


def render_module(m: ModuleIR) -> str:
    kinds = {t.kind for t in _types(m)}
    typing_names = ["Final"]
    if "any" in kinds:
        typing_names.append("Any")
    if (
        "literal" in kinds
        or any(s.fields and any(f.type.kind == "literal" for f in s.fields) for s in m.structs)
        or any(s.tag_field for s in m.structs)
    ):
        typing_names.append("Literal")
    if m.aliases:
        typing_names.append("TypeAlias")
    fields = [f for s in m.structs for f in s.fields]
    base = ["MethodInfo"]
    if m.structs:
        base.append("MCPStruct")
    if any(not f.required and not f.has_default and f.factory is None for f in fields):
        base += ["UNSET", "UnsetType"]
    constants = [
        "REVISION",
        "ROLE",
        "SPEC_URL",
        "CONTEXT_DEPENDENT",
        "METHODS",
        "META_KEYS",
        "ERROR_CODES",
    ]
    if m.extension_id:
        constants.append("EXTENSION_ID")
    if m.divergent:
        constants.append("CORE_DIVERGENCES")
    if m.extended:
        constants.append("CORE_EXTENDED")
    if m.lenient:
        constants.append("LENIENT_PARAMS")
    constants += [c for c, _ in m.meta_keys] + [c for c, _ in m.error_codes]
    all_names = sorted(set(m.names()) | set(constants))

    def doc(item: StructIR | AliasIR) -> str:
        url = m.doc_url.format(anchor=item.anchor.lower())
        if isinstance(item, StructIR) and item.note:
            what = item.note
        elif item.origin == item.name:
            what = f"`{item.name}`"
        elif item.origin.startswith("merge of "):
            what = f"Lossless merge of {item.origin[len('merge of ') :]}"
        else:
            what = f"Inline object at `{item.origin}`"
        return f"{what} in MCP {m.version}: {url}"

    template = _ENV.get_template("module.py.j2")
    return template.render(
        m=m,
        typing_import=f"from typing import {', '.join(sorted(typing_names))}",
        uses_field=any(f.wire != f.attr or f.factory is not None for f in fields),
        base_imports=", ".join(sorted(base, key=lambda n: (n.upper() != n, n))),
        all_names=all_names,
        doc=doc,
        field_line=field_line,
        tag_attr=tag_attr,
    )


_ENV.filters["py"] = py
_ENV.filters["type"] = render_type


def render_init(pins: tuple[Pin, ...]) -> str:
    modern = [p for p in pins if p.role == "modern"]
    if not modern:
        raise GenerationError("no modern revision is pinned")
    latest = max(modern, key=lambda p: p.version)
    return _ENV.get_template("__init__.py.j2").render(pins=pins, latest=latest.version)


def render_latest(pins: tuple[Pin, ...]) -> str:
    latest = max((p for p in pins if p.role == "modern"), key=lambda p: p.version)
    return _ENV.get_template("latest.py.j2").render(latest=latest.version, module=latest.module)


def render_base() -> str:
    return _ENV.get_template("_base.py.j2").render()


# -- formatting with the pinned ruff -------------------------------------------------------
LINE_LENGTH = 100


def pinned_ruff_version(root: Path | None = None) -> str:
    """The exact ruff version the `codegen` extra pins (pyproject.toml is the source)."""
    requirements: list[str] = []
    if root is not None and (root / "pyproject.toml").is_file():
        data = tomllib.loads((root / "pyproject.toml").read_text())
        requirements = list(data["project"]["optional-dependencies"]["codegen"])
    else:
        with contextlib.suppress(metadata.PackageNotFoundError):
            requirements = [r.split(";")[0] for r in metadata.requires("mcpgen") or []]
    for req in requirements:
        req = req.replace(" ", "")  # noqa: PLW2901
        if req.startswith("ruff=="):
            return req[len("ruff==") :]
    raise GenerationError("the codegen extra must pin ruff exactly (ruff==X.Y.Z)")


def format_source(sources: dict[str, str], root: Path | None = None) -> dict[str, str]:
    """Format each source with the pinned ruff, in memory, config-independent."""
    want = pinned_ruff_version(root)
    try:
        have = metadata.version("ruff")
    except metadata.PackageNotFoundError:
        raise GenerationError(f"ruff=={want} is needed: pip install 'mcpgen[codegen]'") from None
    if have != want:
        raise GenerationError(f"ruff {have} is installed but generation is pinned to ruff=={want}")
    ruff = find_ruff_bin()
    out = {}
    for name, text in sources.items():
        proc = subprocess.run(
            [ruff, "format", "--isolated", f"--line-length={LINE_LENGTH}",
             "--target-version=py311", f"--stdin-filename={name}", "-"],
            input=text, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise GenerationError(f"ruff could not format {name}:\n{proc.stderr}")
        out[name] = proc.stdout
    return out
