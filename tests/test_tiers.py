"""The contributor loop (CONTRIBUTING.md): the quick tier reaches every test directory, a
missing system tool fails loudly with how to install it, the opt-out skips, and CI's
strict skips hold on parallel workers."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SYSTEM_TOOLS, need

QUICK = "not slow"


def _pytest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_every_test_directory_has_tests_in_the_quick_tier() -> None:
    """`pytest -m "not slow"` still covers every package: each folder of tests/ holding
    test modules keeps at least one test outside the `slow` marker."""
    folders = {
        path.parent.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("test_*.py")
        if "cases" not in path.parts
    }
    proc = _pytest("--collect-only", "-q", "-n", "0", "-m", QUICK)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    quick = {Path(line.split("::", 1)[0]).parent.as_posix() for line in ids}
    assert len(folders) >= 15 and "tests" in folders
    assert folders <= quick, f"no quick test in: {sorted(folders - quick)}"
    # Each transport keeps a test over a real connection in the quick tier (a subprocess
    # on stdio, uvicorn on a loopback port for the two HTTP transports).
    for transport, test in REAL_TRANSPORT_TESTS.items():
        assert test in ids, f"{transport}: {test} left the quick tier"


# A quick test per transport that goes through a real connection.
REAL_TRANSPORT_TESTS = {
    "stdio": "tests/transports/test_stdio.py::"
    "test_both_eras_on_one_connection_and_legacy_server_requests",
    "Streamable HTTP": "tests/transports/test_http.py::"
    "test_sse_carries_notifications_before_the_result",
    "HTTP+SSE": "tests/client/test_sse_transport.py::test_our_own_server_over_http_sse",
}


def test_a_missing_tool_fails_and_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MCPGEN_STRICT_SKIPS", raising=False)
    monkeypatch.delenv("MCPGEN_ALLOW_MISSING", raising=False)
    with pytest.raises(pytest.fail.Exception) as failed:
        need(False, "nginx", "nginx")
    message = str(failed.value)
    assert SYSTEM_TOOLS["nginx"] in message and "apt-get install nginx" in message
    assert "MCPGEN_ALLOW_MISSING=nginx" in message and "not needs_nginx" in message
    need(True, "nginx", "nginx")  # present: nothing happens


def test_the_opt_out_skips_only_the_tools_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPGEN_STRICT_SKIPS", raising=False)
    monkeypatch.setenv("MCPGEN_ALLOW_MISSING", "nginx, chromium")
    with pytest.raises(pytest.skip.Exception):
        need(False, "nginx", "nginx")
    with pytest.raises(pytest.fail.Exception):
        need(False, "redis-server", "redis-server")
    monkeypatch.setenv("MCPGEN_ALLOW_MISSING", "all")
    with pytest.raises(pytest.skip.Exception):
        need(False, "redis-server", "redis-server")


def test_ci_ignores_the_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPGEN_STRICT_SKIPS", "1")
    monkeypatch.setenv("MCPGEN_ALLOW_MISSING", "all")
    with pytest.raises(pytest.fail.Exception, match="MCPGEN_STRICT_SKIPS=1"):
        need(False, "nginx", "nginx")


def test_probe_skips_when_asked() -> None:
    """Runs (and passes) in the suite; the test below runs it alone, told to skip."""
    if os.environ.get("MCPGEN_TIERS_PROBE") == "skip":
        pytest.skip("the probe was told to skip")


@pytest.mark.slow
def test_strict_skips_fail_on_parallel_workers() -> None:
    """Under MCPGEN_STRICT_SKIPS=1 a skip fails the run on xdist workers too, and `-n auto`
    takes its worker count from MCPGEN_TEST_WORKERS."""
    probe = "tests/test_tiers.py::test_probe_skips_when_asked"
    env = {"MCPGEN_TIERS_PROBE": "skip", "MCPGEN_TEST_WORKERS": "2"}
    strict = _pytest("-n", "auto", probe, env={**env, "MCPGEN_STRICT_SKIPS": "1"})
    assert "2 workers" in strict.stdout, strict.stdout[-2000:]
    assert strict.returncode == 1 and "1 failed" in strict.stdout, strict.stdout[-2000:]
    assert "skipped under MCPGEN_STRICT_SKIPS=1" in strict.stdout
    lenient = _pytest("-n", "auto", probe, env={**env, "MCPGEN_STRICT_SKIPS": "0"})
    assert lenient.returncode == 0 and "1 skipped" in lenient.stdout, lenient.stdout[-2000:]


def _slow(node: ast.expr) -> bool:
    """`pytest.mark.slow`, alone or in a list of marks."""
    if isinstance(node, ast.List | ast.Tuple):
        return any(_slow(item) for item in node.elts)
    return ast.unparse(node) == "pytest.mark.slow"


def test_no_quick_test_waits_for_a_site_build() -> None:
    """A test reading the built site (`zensical_site`) is slow by the tier's definition:
    one such test in the quick tier would put a whole site build in it."""
    quick = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text())
        module_slow = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            and _slow(node.value)
            for node in tree.body
        )
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test"):
                continue
            if "zensical_site" not in {a.arg for a in node.args.args}:
                continue
            if not module_slow and not any(_slow(d) for d in node.decorator_list):
                quick.append(f"{path.relative_to(REPO)}::{node.name}")
    assert quick == []


@pytest.mark.slow
def test_a_modules_quick_tests_run_on_one_worker() -> None:
    """`--dist loadgroup` keeps a module's quick tests together (its module-scoped servers
    start once), whatever pytest does to node ids (tests/scheduling.py)."""
    proc = _pytest("-n", "2", "-v", "-m", QUICK, "tests/test_tiers.py")
    assert proc.returncode == 0, proc.stdout[-3000:]
    workers = {
        line.split()[0]
        for line in proc.stdout.splitlines()
        if line.startswith("[gw") and " PASSED " in line
    }
    assert len(workers) == 1, proc.stdout[-3000:]
    assert proc.stdout.count(" PASSED ") >= 4
