"""The environment CI relies on: never let a missing input turn into silent skips."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import strict_skips


def test_schema_dir_is_present_in_ci() -> None:
    """In CI a missing schema directory must fail the run, not skip half of it."""
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip("only meaningful in CI (CI=true)")
    directory = os.environ.get("MCPGEN_SCHEMA_DIR")
    assert directory, "CI must set MCPGEN_SCHEMA_DIR (see .ci/run)"
    assert (Path(directory) / "2026-07-28" / "schema.json").is_file(), directory


def test_ci_turns_skips_into_failures() -> None:
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip("only meaningful in CI (CI=true)")
    assert strict_skips(), "CI must run with MCPGEN_STRICT_SKIPS=1"
