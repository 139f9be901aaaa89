"""Test-wide setup: where the pinned schemas are, and no silent skips in CI.

* `MCPGEN_SCHEMA_DIR` defaults to `../shared/mcp-spec` next to the repository when
  that directory exists (the layout every developer machine and CI has).
* With `MCPGEN_STRICT_SKIPS=1` (CI sets it), a test that would be skipped because a
  tool (Node/npm, redis, the schema directory, ...) is missing fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_SPEC = REPO.parent / "shared" / "mcp-spec"

if not os.environ.get("MCPGEN_SCHEMA_DIR") and SHARED_SPEC.is_dir():
    os.environ["MCPGEN_SCHEMA_DIR"] = str(SHARED_SPEC)


def strict_skips() -> bool:
    return os.environ.get("MCPGEN_STRICT_SKIPS") == "1"


def need(condition: bool, what: str) -> None:
    """Skip when `what` is unavailable, except under MCPGEN_STRICT_SKIPS=1: then fail."""
    if condition:
        return
    if strict_skips():
        pytest.fail(
            f"{what} is required here (MCPGEN_STRICT_SKIPS=1 turns this skip into a failure)"
        )
    pytest.skip(f"{what} is not available")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if strict_skips() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under MCPGEN_STRICT_SKIPS=1: {report.longrepr}"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def schema_dir() -> Path:
    from mcpgen_codegen.source import resolve_schema_dir

    directory = resolve_schema_dir()
    need(
        (directory / "2026-07-28" / "schema.json").is_file(),
        f"the pinned schema directory ({directory})",
    )
    return directory
