"""The client's shape: small modules, no import cycle (function-level and TYPE_CHECKING
imports count), a sans-I/O core, no stub methods left for another file to fill in."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

RUNTIME = REPO / "runtime"
PACKAGE = RUNTIME / "mcpgen"
CLIENT = sorted(
    [
        *(PACKAGE / "_client").glob("*.py"),
        *(PACKAGE / "cli").glob("*.py"),
        *(PACKAGE / "client").glob("*.py"),
        PACKAGE / "_errors.py",
        *(
            PACKAGE / "transports" / name
            for name in ("_http_link.py", "_link_base.py", "_links.py", "_sse_link.py")
        ),
    ]
)
IO_MODULES = {"asyncio", "socket", "subprocess", "threading", "httpx", "selectors", "ssl"}


def module_name(path: Path) -> str:
    parts = path.relative_to(RUNTIME).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module `path` imports, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_the_client_modules_exist() -> None:
    assert all(path.exists() for path in CLIENT)


@pytest.mark.parametrize("path", CLIENT, ids=module_name)
def test_no_client_module_over_450_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 450


def test_no_import_cycle_through_a_client_module() -> None:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {
        name: {
            target
            for target in imports(path)
            if target in modules and target != name and not name.startswith(target + ".")
        }
        for name, path in modules.items()
    }
    client = {module_name(p) for p in CLIENT}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    cycles = [name for name in sorted(client) if reaches(name, name)]
    assert not cycles


@pytest.mark.parametrize("path", sorted((PACKAGE / "_client").glob("*.py")), ids=module_name)
def test_the_client_core_performs_no_io(path: Path) -> None:
    assert not {name.split(".")[0] for name in imports(path)} & IO_MODULES


@pytest.mark.parametrize("path", CLIENT, ids=module_name)
def test_no_stub_methods(path: Path) -> None:
    tree = ast.parse(path.read_text())
    stubs = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Name | ast.Call)
        and "NotImplementedError" in ast.dump(node.exc)
    ]
    assert not stubs
