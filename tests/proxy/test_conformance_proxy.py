"""The official conformance suite against `mcpgen proxy` over HTTP with a stdio upstream
(examples/everything.py): the 2026-07-28 leg through a legacy upstream, the 2025-11-25
leg through a modern one. Scenarios a legacy upstream cannot serve are listed, with the
reason, in tests/proxy/expected-failures.yml."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance import runner
from tests.processes import http_server
from tests.proxy.common import MCPGEN, UPSTREAM

EXPECTED = Path(__file__).with_name("expected-failures.yml")
# spec leg -> (upstream era, scenarios at least, may fail)
LEGS = {
    "2026-07-28": ("legacy", 40, runner.expected_failures(EXPECTED)),
    "2025-11-25": ("modern", 33, set[str]()),
}


@pytest.mark.slow
@pytest.mark.needs_node
@pytest.mark.parametrize("spec", list(LEGS))
def test_proxy_conformance_leg(spec: str, tmp_path: Path) -> None:
    upstream_era, at_least, allowed = LEGS[spec]
    runner.suite_cli()  # provision first (skips/fails clearly without npm)

    def command(port: int) -> list[str]:
        return [
            MCPGEN,
            "proxy",
            "--transport",
            "http",
            "--port",
            str(port),
            "--upstream-era",
            upstream_era,
            "--",
            *UPSTREAM,
        ]

    with http_server(command, tmp_path / "proxy.log") as url:
        leg = runner.run_leg(url, spec, tmp_path / spec)
    passed, failed, problems = runner.judge([leg], allowed)
    assert not problems, "\n".join(problems)
    assert len(leg.scenarios) >= at_least, sorted(leg.scenarios)
    assert failed == 0 and passed == len(leg.scenarios)
