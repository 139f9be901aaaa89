"""The conformance suite's server legs through nginx and two workers
(examples/cluster/run.sh --redis URL) whose shared state is on a Sentinel-managed
primary, and on a three-master Redis Cluster: every scenario passes, and both workers
served."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance import runner
from tests.conformance.test_conformance import MIN_SCENARIOS
from tests.scale.cluster_run import Cluster, cluster
from tests.stores.redis_ha import ClusterLayout, SentinelLayout

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["sentinel", "cluster"])
def through(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    layout = SentinelLayout() if request.param == "sentinel" else ClusterLayout()
    try:
        log = tmp_path_factory.mktemp(f"ha-{request.param}") / "run.log"
        with cluster(2, log, extra=["--redis", layout.url]) as running:
            yield running
    finally:
        layout.close()


@pytest.mark.needs_node
@pytest.mark.parametrize("spec", runner.SERVER_LEGS)
def test_conformance_leg_through_nginx_on_a_redis_ha_layout(
    spec: str, through: Cluster, tmp_path: Path
) -> None:
    runner.suite_cli()
    before = len(through.hits())
    leg = runner.run_leg(through.url, spec, tmp_path / spec)
    passed, failed, problems = runner.judge([leg])
    assert not problems, "\n".join(problems)
    assert len(leg.scenarios) >= MIN_SCENARIOS[spec], sorted(leg.scenarios)
    assert failed == 0 and passed == len(leg.scenarios)
    assert len({hit.upstream for hit in through.hits()[before:]}) == 2
