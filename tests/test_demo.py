"""The README's main job: the demo server and a client round trip, over both transports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--http"],
        pytest.param(["--legacy"], marks=pytest.mark.slow),
        pytest.param(["--http", "--legacy"], marks=pytest.mark.slow),
    ],
)
def test_demo_round_trip(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "demo.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    era = "legacy" if "--legacy" in args else "modern"
    assert f"era {era}" in proc.stdout
    assert "'Hello, Ada!'" in proc.stdout or "User response: action=accept" in proc.stdout
    assert proc.stdout.rstrip().endswith("round trip complete")
