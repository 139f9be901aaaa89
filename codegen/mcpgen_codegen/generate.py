"""Regenerate `generated/mcpgen_types` from the pins, or check it has not drifted."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from mcpgen_codegen.config import (
    GenerationError,
    Patch,
    Pins,
    Policy,
    load_patches,
    load_pins,
    load_policy,
)
from mcpgen_codegen.ir import ModuleIR
from mcpgen_codegen.pipeline import build_module
from mcpgen_codegen.render import (
    format_source,
    render_base,
    render_init,
    render_latest,
    render_module,
)
from mcpgen_codegen.selfcheck import self_check
from mcpgen_codegen.source import load_schema

PACKAGE_DIR = Path("generated") / "mcpgen_types"


@dataclass(frozen=True)
class Project:
    root: Path
    pins: Pins
    patches: tuple[Patch, ...]
    policy: Policy

    @classmethod
    def load(cls, root: Path) -> Project:
        schema = root / "schema"
        return cls(
            root=root,
            pins=load_pins(schema / "pins.toml"),
            patches=load_patches(schema / "patches.toml"),
            policy=load_policy(schema / "policy.toml"),
        )


def find_root(start: Path | None = None) -> Path:
    """The nearest directory at or above `start` holding schema/pins.toml."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "schema" / "pins.toml").is_file():
            return candidate
    raise GenerationError(
        f"no schema/pins.toml at or above {here}; run inside the repository or pass --root"
    )


@dataclass(frozen=True)
class Generated:
    files: dict[str, str]  # repo-relative path -> formatted source
    modules: dict[str, ModuleIR]
    checked: int  # definitions proven decodable by the self-check


def generate(project: Project, schema_dir: Path, only: str | None = None) -> Generated:
    pins = project.pins.revisions
    if only is not None:
        project.pins.get(only)  # fail early on an unknown version
    order = sorted(pins, key=lambda p: p.role == "extension")
    irs: dict[str, ModuleIR] = {}
    for pin in order:
        needed = (
            only is None
            or pin.version == only
            or any(p.extends == pin.version and p.version == only for p in pins)
        )
        if not needed:
            continue
        core = irs.get(pin.extends) if pin.extends else None
        schema = load_schema(pin, schema_dir)
        irs[pin.version] = build_module(schema, pin, project.patches, project.policy, core)
    package: dict[str, str] = {}
    for pin in pins:
        if pin.version in irs:
            package[f"mcpgen_types/{pin.module}.py"] = render_module(irs[pin.version])
    package["mcpgen_types/__init__.py"] = render_init(pins)
    package["mcpgen_types/_base.py"] = render_base()
    package["mcpgen_types/latest.py"] = render_latest(pins)
    package = format_source(package, project.root)
    package["mcpgen_types/py.typed"] = ""
    plan = {
        ir.module: sorted({s.name for s in ir.structs} | {a.name for a in ir.aliases})
        for ir in irs.values()
    }
    checked = (
        self_check(package, plan)
        if only is None
        else self_check_subset(package, plan, irs, project)
    )
    files = {str(Path("generated") / rel): text for rel, text in package.items()}
    if only is not None:
        module = project.pins.get(only).module
        files = {k: v for k, v in files.items() if k.endswith(f"/{module}.py")}
    return Generated(files, {ir.version: ir for ir in irs.values()}, checked)


def self_check_subset(
    package: dict[str, str], plan: dict[str, list[str]], irs: dict[str, ModuleIR], project: Project
) -> int:
    """With --only, the other modules come from the committed tree."""
    merged = dict(package)
    committed = project.root / PACKAGE_DIR
    for path in committed.glob("*.py"):
        merged.setdefault(f"mcpgen_types/{path.name}", path.read_text())
    return self_check(merged, plan)


def drift(project: Project, generated: Generated, full: bool) -> list[str]:
    """Unified diffs between what is committed and what generation produces."""
    out = []
    for rel, text in sorted(generated.files.items()):
        path = project.root / rel
        current = path.read_text() if path.is_file() else ""
        if current != text:
            out.append(
                "".join(
                    difflib.unified_diff(
                        current.splitlines(keepends=True), text.splitlines(keepends=True),
                        fromfile=f"a/{rel}", tofile=f"b/{rel}",
                    )
                )
                or f"--- a/{rel}\n+++ b/{rel}\n(whitespace-only change)\n"
            )  # fmt: skip
    if full:
        for stale in stale_files(project, generated):
            out.append(f"--- a/{stale}\n+++ /dev/null\n(no pinned revision produces this file)\n")
    return out


def stale_files(project: Project, generated: Generated) -> list[str]:
    folder = project.root / PACKAGE_DIR
    if not folder.is_dir():
        return []
    known = set(generated.files)
    return sorted(
        str(p.relative_to(project.root))
        for p in folder.iterdir()
        if p.is_file()
        and p.suffix in (".py", ".typed")
        and str(p.relative_to(project.root)) not in known
    )


def write(project: Project, generated: Generated, full: bool) -> list[str]:
    changed = []
    for rel, text in sorted(generated.files.items()):
        path = project.root / rel
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed.append(rel)
    if full:
        for stale in stale_files(project, generated):
            (project.root / stale).unlink()
            changed.append(f"{stale} (removed)")
    return changed
