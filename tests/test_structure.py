"""The runtime's shape (issue 10, design.md section 3): small modules, no import cycle,
no class spread over files by stub methods, and typed seams.

Import edges are read from the source (every `import`, at module level, inside a
function or under `TYPE_CHECKING`), so a cycle hidden by a function-level import
still counts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO

RUNTIME = REPO / "runtime"
PACKAGE = RUNTIME / "mcpgen"
MAX_LINES = 450
# Parameters and attributes that name a seam object: these must carry a real type.
SEAM_NAMES = frozenset(
    {"session", "server", "core", "call", "link", "channel", "connection", "store", "bus"}
)


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The runtime modules `name` imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            if source not in known:
                continue
            submodules = [f"{source}.{a.name}" for a in node.names]
            hits = [m for m in submodules if m in known]
            # `from pkg import submodule` imports the submodule; `from pkg import name`
            # runs the package's __init__.
            yield from hits
            if len(hits) < len(submodules):
                yield source


def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {m for m in imported(name, path, known) if m != name} for name, path in known.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mcpgen._server._core import ServerCore\n"
        "def f():\n    from mcpgen import _jsonrpc\n"
    )
    known = {"mcpgen._server._core": source, "mcpgen._jsonrpc": source, "mcpgen": source}
    assert set(imported("mcpgen.x", source, known)) == {"mcpgen._server._core", "mcpgen._jsonrpc"}


def test_no_import_cycle_in_the_runtime() -> None:
    found = cycles(graph())
    assert not found, "import cycles (counting function-level and TYPE_CHECKING imports):\n" + (
        "\n".join(" <-> ".join(c) for c in found)
    )


def test_no_runtime_module_over_the_line_budget() -> None:
    over = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not over, f"modules over {MAX_LINES} lines: {over}"


def test_no_class_is_spread_over_files_by_stub_methods() -> None:
    stubs = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Raise)
                and node.exc is not None
                and "NotImplementedError" in ast.unparse(node.exc)
            ):
                stubs.append(f"{name}:{node.lineno}")
    assert not stubs, f"NotImplementedError stubs: {stubs}"


def test_seam_objects_are_typed() -> None:
    """A parameter or attribute naming a session, server, core, call, link, channel,
    connection, store or bus is never annotated `Any`."""
    untyped = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.arg):
                label, annotation = node.arg, node.annotation
            elif isinstance(node, ast.AnnAssign):
                target = node.target
                label = target.attr if isinstance(target, ast.Attribute) else ast.unparse(target)
                annotation = node.annotation
            else:
                continue
            if label.lstrip("_") in SEAM_NAMES and annotation is not None:
                text = ast.unparse(annotation)
                if text == "Any" or text.startswith("Any |") or text.endswith("| Any"):
                    untyped.append(f"{name}:{node.lineno} {label}: {text}")
    assert not untyped, "seam objects typed Any:\n" + "\n".join(untyped)
