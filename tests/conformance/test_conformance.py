"""The official conformance suite: server mode against examples/everything.py over HTTP
(both spec-version legs and the default leg, which alone runs the extension scenarios
such as the Tasks extension's `tasks-*`), client mode against
examples/conformance_client.py (both spec-version legs).

Every scenario of `--suite all --spec-version 2025-11-25`, `... 2026-07-28` and bare
`--suite all` must pass (no FAILURE and no WARNING check), except those listed, with a
reason, in expected-failures.yml. Needs Node/npm: under MCPGEN_STRICT_SKIPS=1 (CI) their
absence fails the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance import runner

# How many scenarios each leg runs in 0.2.0-alpha.12; fewer means some silently vanished.
MIN_SCENARIOS = {"2025-11-25": 33, "2026-07-28": 40, "default": 65}
# The Tasks extension's scenarios in the default leg (tasks-status-notifications is
# skipped by the suite itself, which still counts it as passing).
TASK_SCENARIOS = 10


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    runner.suite_cli()  # provision first (skips/fails clearly without npm)
    with runner.everything_server() as address:
        yield address


@pytest.mark.slow
@pytest.mark.needs_node
@pytest.mark.parametrize("spec", runner.SERVER_LEGS)
def test_conformance_leg(url: str, spec: str, tmp_path: Path) -> None:
    leg = runner.run_leg(url, spec, tmp_path / spec)
    passed, failed, problems = runner.judge([leg])
    assert not problems, "\n".join(problems)
    assert len(leg.scenarios) >= MIN_SCENARIOS[spec], sorted(leg.scenarios)
    assert failed == 0 and passed == len(leg.scenarios)
    if spec == "default":
        tasks = [name for name in leg.scenarios if name.startswith("tasks-")]
        assert len(tasks) >= TASK_SCENARIOS, sorted(leg.scenarios)


# Client scenarios per leg in 0.2.0-alpha.12 (auth/* included).
MIN_CLIENT_SCENARIOS = {"2025-11-25": 19, "2026-07-28": 33}


@pytest.mark.slow
@pytest.mark.needs_node
@pytest.mark.parametrize("spec", runner.LEGS)
def test_client_conformance_leg(spec: str, tmp_path: Path) -> None:
    """examples/conformance_client.py (mcpgen.Client) against the suite's mock servers."""
    leg = runner.run_client_leg(spec, tmp_path / spec)
    allowed = runner.expected_failures(runner.EXPECTED_CLIENT_FAILURES)
    _, failed, problems = runner.judge([leg], allowed)
    assert not problems, "\n".join(problems)
    assert len(leg.scenarios) >= MIN_CLIENT_SCENARIOS[spec], sorted(leg.scenarios)
    assert not leg.failing(), leg.failing()
    assert failed == 0


@pytest.mark.slow
@pytest.mark.needs_node
@pytest.mark.parametrize(
    "name",
    [
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
        "auth/dpop",
        "auth/dpop-nonce",
    ],
)
def test_client_auth_extension_scenarios(name: str, tmp_path: Path) -> None:
    """The authorization extensions (default leg only): client credentials with
    client_secret_basic and private_key_jwt (credentials and key handed over in
    MCP_CONFORMANCE_CONTEXT), and DPoP-bound tokens, with and without nonces."""
    leg = runner.run_client_scenario(name, tmp_path)
    assert list(leg.scenarios) == [name], leg.log[-2000:]
    assert not leg.failing(), leg.failing()


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("auth/basic-cimd-2026-11-30T09-33-20-417Z", "auth/basic-cimd"),  # '-20' in the time
        ("server-tools-call-2026-11-30T05-56-33-417Z", "tools-call"),
        ("tasks-get-2020-01-20T20-20-20-200Z", "tasks-get"),
    ],
)
def test_scenario_names_from_result_folders(folder: str, name: str) -> None:
    assert runner.scenario_name(folder) == name
