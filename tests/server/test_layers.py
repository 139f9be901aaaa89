"""The core performs no I/O: none of its modules (server core, client core, stores)
imports an I/O or threading module."""

from __future__ import annotations

import ast
import re
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


# The server-side transports: they carry out outcomes and decide no protocol rule.
TRANSPORTS = REPO / "runtime" / "mcpgen" / "transports"
SERVER_TRANSPORTS = sorted(
    TRANSPORTS / f"{name}.py"
    for name in (
        "_asgi",
        "_cors",
        "_http",
        "_memory",
        "_port",
        "_sessions",
        "_sse_legacy",
        "_stdio",
    )
)
REVISION = re.compile(r"\d{4}-\d{2}-\d{2}")


@pytest.mark.parametrize("path", SERVER_TRANSPORTS, ids=lambda p: p.name)
def test_transports_name_no_revision_and_read_no_session_internals(path: Path) -> None:
    """Revision rules live in mcpgen._protocol; a transport sees a session through
    `SessionPort` (no `.legacy` state, no `.bridge`, no `.inflight`)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not REVISION.fullmatch(node.value), f"{path.name}:{node.lineno} {node.value}"
        if isinstance(node, ast.Attribute):
            assert node.attr not in {"legacy", "bridge", "inflight"}, (
                f"{path.name}:{node.lineno} reads .{node.attr}"
            )


def test_transports_import_the_core_only_through_its_package() -> None:
    """`mcpgen._server` (its package interface) is all a transport imports of the core."""
    for path in SERVER_TRANSPORTS:
        if path.name == "_sessions.py":  # the legacy-session store: ids from _state
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("mcpgen._server."), (
                    f"{path.name}:{node.lineno} imports {node.module}"
                )
