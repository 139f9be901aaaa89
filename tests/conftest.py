"""Test-wide setup: where the pinned schemas are, loud failures for a missing tool, and
the parallel run (pytest-xdist).

* `MCPGEN_SCHEMA_DIR` defaults to `../shared/mcp-spec` next to the repository when
  that directory exists (the layout every developer machine and CI has).
* A test that needs a system tool (redis-server, nginx, chromium, Node/npm; the list is
  `SYSTEM_TOOLS`, CONTRIBUTING.md shows it) fails when the tool is missing, saying how to
  install it. A contributor without one opts out with `MCPGEN_ALLOW_MISSING=nginx,chromium`
  (or `all`): those tests skip instead. `-m "not needs_nginx"` deselects them up front.
* With `MCPGEN_STRICT_SKIPS=1` (CI sets it) the opt-out is ignored and any skip fails.
* The suite runs on parallel workers (`-n auto` in pyproject's addopts); how many is
  `MCPGEN_TEST_WORKERS`, else twice the cores: most tests wait on subprocesses and sockets.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests import scheduling

REPO = Path(__file__).resolve().parent.parent
SHARED_SPEC = REPO.parent / "shared" / "mcp-spec"

if not os.environ.get("MCPGEN_SCHEMA_DIR") and SHARED_SPEC.is_dir():
    os.environ["MCPGEN_SCHEMA_DIR"] = str(SHARED_SPEC)

# What the suite needs from the system, and how to get it on Debian/Ubuntu.
SYSTEM_TOOLS = {
    "redis-server": "apt-get install redis-server",
    "nginx": "apt-get install nginx",
    "chromium": "apt-get install chromium",
    "redis-sentinel": "apt-get install redis-sentinel (else redis-server --sentinel is used)",
    "wrk": "apt-get install wrk",
    "node": "apt-get install nodejs npm (Node 22 itself comes from npm into the test cache)",
    "network": "a package index reachable by pip and npm (first run only: then cached)",
    "schemas": "the pinned schemas: set MCPGEN_SCHEMA_DIR (see CONTRIBUTING.md)",
}


def strict_skips() -> bool:
    return os.environ.get("MCPGEN_STRICT_SKIPS") == "1"


def allowed_missing() -> set[str]:
    """The tools a contributor said they do not have (MCPGEN_ALLOW_MISSING)."""
    words = os.environ.get("MCPGEN_ALLOW_MISSING", "").replace(",", " ").split()
    return set(SYSTEM_TOOLS) if "all" in words else set(words)


def need(condition: bool, what: str, tool: str | None = None) -> None:
    """Fail when `what` (one of `SYSTEM_TOOLS` when `tool` names it) is unavailable,
    saying how to install it; skip instead when MCPGEN_ALLOW_MISSING lists the tool,
    except under MCPGEN_STRICT_SKIPS=1 (CI)."""
    if condition:
        return
    if strict_skips():
        pytest.fail(
            f"{what} is required here (MCPGEN_STRICT_SKIPS=1 turns this skip into a failure)"
        )
    if tool is not None and tool in allowed_missing():
        pytest.skip(f"{what} is not available (MCPGEN_ALLOW_MISSING={tool})")
    install = SYSTEM_TOOLS.get(tool or "", "")
    pytest.fail(
        f"{what} is not available. Install it ({install or 'see CONTRIBUTING.md'}), or run "
        f"without the tests that need it: MCPGEN_ALLOW_MISSING={tool or 'all'} skips them"
        + (f", -m 'not needs_{tool.split('-')[0]}' deselects them" if tool in MARKED else ""),
        pytrace=False,
    )


# The tools with a `needs_*` marker (pyproject's markers) for `-m "not needs_X"`.
MARKED = {"redis-server", "nginx", "chromium", "node"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if strict_skips() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under MCPGEN_STRICT_SKIPS=1: {report.longrepr}"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: MCPGEN_TEST_WORKERS, else twice the cores (the tests mostly wait)."""
    chosen = os.environ.get("MCPGEN_TEST_WORKERS")
    if chosen:
        return int(chosen)
    return 2 * (os.cpu_count() or 1)


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """How the parallel run hands out work (pyproject: --dist loadgroup
    --no-loadscope-reorder): each slow test alone, first, so the run ends on short work
    rather than waiting on one long test; then the quick tests a module at a time (its
    module-scoped servers start once), the biggest modules first. The order is a stable
    sort of the collection, the same on every worker."""
    sizes = Counter(item.path for item in items)
    groups: dict[str, str] = {}
    for item in items:
        if item.get_closest_marker("slow") is None and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(str(item.path.relative_to(REPO))))
        marker = item.get_closest_marker("xdist_group")
        if marker is not None:
            name = marker.args[0] if marker.args else marker.kwargs.get("name", "default")
            groups[item.nodeid] = f"group:{name}"
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, -sizes[item.path]))
    scheduling.write(config, groups)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist, on the controller: tell each worker where to write its tests' groups."""
    node.workerinput[scheduling.KEY] = str(scheduling.directory(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` with the groups read from the workers' files (tests/scheduling.py:
    xdist's own way no longer reaches the controller under pytest 9.2)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return scheduling.GroupScheduling(config, log, scheduling.directory(config))


def pytest_unconfigure(config: pytest.Config) -> None:
    scheduling.remove(config)


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
        "schemas",
    )
    return directory
