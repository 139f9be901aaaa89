"""Every upstream example decodes as its definition and re-encodes to the same JSON."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest

import mcpgen_types.v2026_07_28 as v2026

EXCEPTIONS = tomllib.loads((Path(__file__).parent / "corpus_exceptions.toml").read_text())


def strict(value: Any) -> Any:
    """JSON value with its type made explicit, so 1 != 1.0 and true != 1."""
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strict(v) for v in value]
    return (type(value).__name__, value)


def examples(schema_dir: Path) -> list[Path]:
    return sorted((schema_dir / "2026-07-28" / "examples").glob("*/*.json"))


def roundtrip(path: Path) -> tuple[Any, Any]:
    definition = getattr(v2026, path.parent.name)
    raw = path.read_bytes()
    decoded = msgspec.json.decode(raw, type=definition)
    return json.loads(raw), json.loads(msgspec.json.encode(decoded))


def test_corpus_round_trips(schema_dir: Path) -> None:
    files = examples(schema_dir)
    assert len(files) == 129, "the pinned corpus has 129 examples"
    excused = {e["file"] for e in EXCEPTIONS["2026-07-28"]}
    failures, passed = [], 0
    for path in files:
        rel = f"{path.parent.name}/{path.name}"
        original, back = roundtrip(path)
        if strict(original) == strict(back):
            passed += 1
        elif rel not in excused:
            failures.append(f"{rel}: {json.dumps(original)[:200]} -> {json.dumps(back)[:200]}")
    assert not failures, "\n".join(failures)
    assert passed == len(files) - len(excused)


@pytest.mark.parametrize("entry", EXCEPTIONS["2026-07-28"], ids=lambda e: e["file"])
def test_every_exception_is_still_needed(schema_dir: Path, entry: dict[str, str]) -> None:
    path = schema_dir / "2026-07-28" / "examples" / entry["file"]
    assert path.is_file(), f"stale exception: {entry['file']} no longer exists upstream"
    assert len(entry["reason"]) > 40, "say why"
    original, back = roundtrip(path)
    assert strict(original) != strict(back), f"stale exception: {entry['file']} round-trips now"
