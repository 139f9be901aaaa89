"""The public API is `mcpgen.__all__`: sorted, importable, every export documented."""

from __future__ import annotations

import inspect

import mcpgen


def test_all_is_sorted_and_resolves() -> None:
    assert mcpgen.__all__ == sorted(mcpgen.__all__)
    for name in mcpgen.__all__:
        assert hasattr(mcpgen, name), name


def test_every_export_is_documented() -> None:
    undocumented = [
        name
        for name in mcpgen.__all__
        if name != "__version__" and not (inspect.getdoc(getattr(mcpgen, name)) or "").strip()
    ]
    assert not undocumented


def test_importing_mcpgen_pulls_in_no_generator_or_cli_dependency() -> None:
    import subprocess
    import sys

    heavy = ("jinja2", "typer", "mcpgen_codegen", "httpx", "uvicorn")
    code = (
        f"import sys, mcpgen, mcpgen.types; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
