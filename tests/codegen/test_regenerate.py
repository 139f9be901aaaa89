"""`mcpgen regenerate`: clean check, determinism, drift detection, new revisions by pin only."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen_codegen.config import GenerationError, Patch
from mcpgen_codegen.patching import add_properties, apply_patches

CLI = [sys.executable, "-m", "mcpgen_codegen.cli"]


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.mark.parametrize("seed", ["0", pytest.param("4242", marks=pytest.mark.slow)])
def test_check_is_clean_and_deterministic(repo: Path, schema_dir: Path, seed: str) -> None:
    """The committed tree equals a fresh render, byte for byte, under any hash seed."""
    proc = run_cli("regenerate", "--check", cwd=repo, env={"PYTHONHASHSEED": seed})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout


def copy_project(repo: Path, dest: Path) -> Path:
    for part in ("schema", "generated", "pyproject.toml"):
        src = repo / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(src, dest / part)
    return dest


@pytest.mark.slow
def test_check_reports_drift_with_a_diff(repo: Path, schema_dir: Path, tmp_path: Path) -> None:
    root = copy_project(repo, tmp_path)
    target = root / "generated" / "mcpgen_types" / "v2025_06_18.py"
    target.write_text(target.read_text().replace("class Annotations(", "class Annotationz("))
    (root / "generated" / "mcpgen_types" / "v1999_01_01.py").write_text("# stale\n")
    proc = run_cli("regenerate", "--check", "--root", str(root), cwd=root)
    assert proc.returncode == 1
    assert "-class Annotationz(" in proc.stdout and "+class Annotations(" in proc.stdout
    assert "v1999_01_01.py" in proc.stdout  # a module no pin produces is drift too
    # Regenerating repairs both and a second check is clean.
    assert run_cli("regenerate", "--root", str(root), cwd=root).returncode == 0
    assert not (root / "generated" / "mcpgen_types" / "v1999_01_01.py").exists()
    assert run_cli("regenerate", "--check", "--root", str(root), cwd=root).returncode == 0


@pytest.mark.slow
def test_only_one_revision(repo: Path, schema_dir: Path, tmp_path: Path) -> None:
    root = copy_project(repo, tmp_path)
    target = root / "generated" / "mcpgen_types" / "v2024_11_05.py"
    target.unlink()
    proc = run_cli("regenerate", "--only", "2024-11-05", "--root", str(root), cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (
        target.read_text() == (repo / "generated" / "mcpgen_types" / "v2024_11_05.py").read_text()
    )
    bad = run_cli("regenerate", "--only", "1999-01-01", "--root", str(root), cwd=root)
    assert bad.returncode == 2 and "no pinned revision '1999-01-01'" in bad.stderr


@pytest.mark.slow
def test_new_revision_needs_only_a_pin(repo: Path, schema_dir: Path, tmp_path: Path) -> None:
    """Re-pinning is data: a new [[revision]] entry and `mcpgen regenerate`, no code."""
    root = copy_project(repo, tmp_path / "proj")
    spec = tmp_path / "spec"
    shutil.copytree(schema_dir, spec)
    (spec / "2099-01-01").mkdir()
    shutil.copy(schema_dir / "2026-07-28" / "schema.json", spec / "2099-01-01" / "schema.json")
    pins = root / "schema" / "pins.toml"
    sha = (
        __import__("hashlib").sha256((spec / "2099-01-01" / "schema.json").read_bytes()).hexdigest()
    )
    pins.write_text(
        pins.read_text()
        + f"""
[[revision]]
version = "2099-01-01"
repo = "modelcontextprotocol/modelcontextprotocol"
commit = "b0f60ba5409db7a6582440a7b473cc0398890f15"
path = "schema/2099-01-01/schema.json"
local = "2099-01-01/schema.json"
sha256 = "{sha}"
role = "modern"
module = "v2099_01_01"
"""
    )
    proc = run_cli("regenerate", "--root", str(root), "--schema-dir", str(spec), cwd=root)
    assert proc.returncode == 0, proc.stderr
    module = root / "generated" / "mcpgen_types" / "v2099_01_01.py"
    assert "class CallToolRequest(" in module.read_text()
    init = (root / "generated" / "mcpgen_types" / "__init__.py").read_text()
    assert '"2099-01-01": "mcpgen_types.v2099_01_01"' in init
    assert 'LATEST: Final = "2099-01-01"' in init  # the newest modern revision wins
    latest = (root / "generated" / "mcpgen_types" / "latest.py").read_text()
    assert "from mcpgen_types.v2099_01_01 import *" in latest


def test_sha_mismatch_in_schema_dir_is_refused(
    repo: Path, schema_dir: Path, tmp_path: Path
) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(schema_dir, spec)
    target = spec / "2025-03-26" / "schema.json"
    target.write_bytes(target.read_bytes() + b"\n")
    proc = run_cli("regenerate", "--check", "--schema-dir", str(spec), cwd=repo)
    assert proc.returncode == 2
    assert "does not match the pin" in proc.stderr and "2025-03-26" in proc.stderr


def test_missing_schema_dir_names_the_remedies(repo: Path, tmp_path: Path) -> None:
    proc = run_cli("regenerate", "--check", "--schema-dir", str(tmp_path / "nowhere"), cwd=repo)
    assert proc.returncode == 2
    assert "MCPGEN_SCHEMA_DIR" in proc.stderr and "mcpgen fetch-schemas" in proc.stderr


def test_patch_whose_old_value_moved_aborts() -> None:
    schema = {"$defs": {"JSONValue": {"anyOf": [{}, {}, {"type": ["string", "number"]}]}}}
    patch = Patch(
        ("v",), "/$defs/JSONValue/anyOf/2/type", ["string", "integer", "boolean"], ["x"], "r"
    )
    with pytest.raises(GenerationError, match="upstream changed"):
        apply_patches(schema, "v", (patch,))
    assert apply_patches(schema, "other", (patch,)) == schema  # not for this revision
    with pytest.raises(GenerationError, match="nothing at"):
        apply_patches(schema, "v", (Patch(("v",), "/$defs/Nope/x", 1, 2, "r"),))


def test_patches_apply_and_leave_the_input_untouched() -> None:
    schema = {"$defs": {"A": {"type": ["string", "integer"]}}}
    patch = Patch(("v",), "/$defs/A/type", ["string", "integer"], ["string", "number"], "r")
    out = apply_patches(schema, "v", (patch,))
    assert out["$defs"]["A"]["type"] == ["string", "number"]
    assert schema["$defs"]["A"]["type"] == ["string", "integer"]


def test_policy_added_properties_join_a_copy_and_never_overwrite() -> None:
    extensions = {"type": "object", "additionalProperties": {"type": "object"}}
    added = {"Caps": {"extensions": extensions}}
    for container in ("$defs", "definitions"):  # 2020-12 and draft-07 documents
        schema = {container: {"Caps": {"type": "object", "properties": {"roots": {}}}}}
        out = add_properties(schema, "v", added)
        assert out[container]["Caps"]["properties"] == {"roots": {}, "extensions": extensions}
        assert schema[container]["Caps"]["properties"] == {"roots": {}}
    upstream = {"$defs": {"Caps": {"properties": {"extensions": {"type": "object"}}}}}
    with pytest.raises(GenerationError, match=r"already defines Caps\.extensions; drop"):
        add_properties(upstream, "v", added)
    with pytest.raises(GenerationError, match="has no definition Caps"):
        add_properties({"$defs": {}}, "v", added)


def test_every_pinned_patch_still_applies(repo: Path, schema_dir: Path) -> None:
    from mcpgen_codegen.generate import Project
    from mcpgen_codegen.source import load_schema

    project = Project.load(repo)
    applied = 0
    for pin in project.pins.revisions:
        patched = apply_patches(load_schema(pin, schema_dir), pin.version, project.patches)
        applied += sum(1 for p in project.patches if pin.version in p.revisions)
        assert patched
    assert applied == sum(len(p.revisions) for p in project.patches)
