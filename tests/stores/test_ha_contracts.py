"""The Redis stores' contract tests again, against a Sentinel-managed primary (a
primary, a replica, three sentinels) and against a three-master Redis Cluster: the same
test files, their Redis fixture pointed at the layout (`MCPGEN_TEST_REDIS_LAYOUT`,
`redis_server.redis_url`), in a pytest run of their own that starts and stops the
layout's processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stores.redis_ha import binary

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = [
    f"tests/stores/test_{name}_contract.py"
    for name in ("sessions", "events", "tasks", "bus", "replay", "policy_stores")
]


# Each leg starts a Sentinel or Cluster layout and a pytest run of its own (30 s to a
# minute): outside the quick tier, as the other HA legs (CONTRIBUTING.md).
@pytest.mark.slow
@pytest.mark.parametrize("layout", ["sentinel", "cluster"])
def test_the_redis_store_contracts_hold_on(layout: str) -> None:
    binary("redis-server")
    binary("redis-cli")
    env = {**os.environ, "MCPGEN_TEST_REDIS_LAYOUT": layout}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CONTRACTS]
    done = subprocess.run(
        [*argv, "-k", "Redis or redis"],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    tail = done.stdout[-3000:]
    assert done.returncode == 0, tail
    summary = tail.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary, tail
    assert int(summary.split(" passed")[0].split()[-1]) >= 30, tail  # the Redis cases ran
