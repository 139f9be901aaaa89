"""Every example that starts a server does so under `if __name__ == "__main__":`, so that
`mcpgen serve` (which imports the module and runs the server itself) can load it."""

from __future__ import annotations

import ast

from tests.conftest import REPO
from tests.docs.blocks import PYTHON, fenced_blocks, pages

# Receivers of a `.run(...)` that is not a server's.
NOT_A_SERVER = {"asyncio", "anyio", "trio", "uvloop", "subprocess"}


def _unguarded_runs(source: str) -> list[int]:
    """Lines of module-level statements that call `something.run(...)` on a server."""
    lines = []
    for statement in ast.parse(source).body:
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr == "run":
            receiver = func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in NOT_A_SERVER):
                lines.append(statement.lineno)
    return lines


def _sources() -> dict[str, str]:
    found = {}
    for page in [REPO / "README.md", *pages()]:
        for block in fenced_blocks(page):
            if block.language in PYTHON:
                found[f"{page.relative_to(REPO)}:{block.line}"] = block.code
    for example in sorted((REPO / "examples").glob("*.py")):
        found[str(example.relative_to(REPO))] = example.read_text()
    return found


def test_the_check_sees_an_unguarded_run() -> None:
    assert _unguarded_runs("server = make()\nserver.run()\n") == [2]
    assert _unguarded_runs("Server('x').run('http')\n") == [1]
    guarded = "import asyncio\nasyncio.run(main())\nif __name__ == '__main__':\n    s.run()\n"
    assert _unguarded_runs(guarded) == []


def test_no_example_starts_a_server_at_import() -> None:
    sources = _sources()
    assert len(sources) > 50 and any(name.startswith("README.md") for name in sources)
    unguarded = {name: lines for name, code in sources.items() if (lines := _unguarded_runs(code))}
    assert unguarded == {}


def test_the_readme_server_example_is_guarded() -> None:
    readme = (REPO / "README.md").read_text()
    assert "server.run()" in readme
    blocks = [b.code for b in fenced_blocks(REPO / "README.md") if "server.run()" in b.code]
    assert blocks and all('if __name__ == "__main__":' in code for code in blocks)
