"""The core performs no I/O: none of its modules (server core, client core, stores)
imports an I/O or threading module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

CORE = REPO / "runtime" / "mcpgen"
CORE_MODULES = sorted(
    [
        CORE / "_jsonrpc.py",
        CORE / "_protocol.py",
        *(CORE / "_server").glob("*.py"),
        *(CORE / "_client").glob("*.py"),
        *(CORE / "stores").glob("*.py"),
    ]
)
FORBIDDEN = {
    "asyncio",
    "socket",
    "subprocess",
    "threading",
    "httpx",
    "selectors",
    "ssl",
    "multiprocessing",
    "uvicorn",
    "anyio",
}


@pytest.mark.parametrize("path", CORE_MODULES, ids=lambda p: p.name)
def test_core_imports_no_io(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert not imported & FORBIDDEN, f"{path.name} imports {imported & FORBIDDEN}"
