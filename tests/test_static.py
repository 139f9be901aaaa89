"""Static gates over runtime, generated and codegen: ruff, mypy --strict, import layers,
no copied spec prose in generated code, and a wheel that ships all three packages."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

ROOTS = ["runtime", "generated", "codegen"]


def run(*cmd: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} is part of the dev extra: pip install -e '.[dev]'"
    return found


def test_ruff_lint() -> None:
    proc = run(
        tool("ruff"), "check", "--output-format=concise", *ROOTS, "tests", "bench", "examples"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = run(tool("ruff"), "format", "--check", *ROOTS, "tests", "bench", "examples")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict() -> None:
    proc = run(sys.executable, "-m", "mypy", "--strict")  # files from pyproject: the 3 roots
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


def test_import_contracts() -> None:
    proc = run(tool("lint-imports"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_generated_code_carries_no_schema_prose(schema_dir: Path) -> None:
    """Docstrings name the definition and link the spec; no description is copied."""
    generated = "\n".join(p.read_text() for p in (REPO / "generated" / "mcpgen_types").glob("*.py"))
    sentences: set[str] = set()
    for path in schema_dir.glob("**/schema.json"):
        for text in re.findall(r'"description":\s*("(?:[^"\\]|\\.)*")', path.read_text()):
            for sentence in re.split(r"(?<=[.!?])\s+", json.loads(text)):
                if len(sentence) > 40:
                    sentences.add(sentence.strip())
    assert len(sentences) > 200
    copied = [s for s in sentences if s in generated]
    assert not copied, copied[:5]


@pytest.mark.slow
def test_wheel_ships_all_three_packages(tmp_path: Path) -> None:
    proc = run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(tmp_path),
        ".",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("mcpgen-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    expected = [
        "mcpgen/__init__.py",
        "mcpgen_types/v2026_07_28.py",
        "mcpgen_types/py.typed",
        "mcpgen_codegen/generate.py",
        "mcpgen_codegen/templates/module.py.j2",
    ]
    assert not [e for e in expected if e not in names]
    assert not any(n.startswith(("runtime/", "generated/", "codegen/")) for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    runtime_deps = [
        line
        for line in text.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert [d.split()[1] for d in runtime_deps] == ["msgspec>=0.19"], runtime_deps
