"""A call from the official Python SDK client, traced in its own process with the
OpenTelemetry SDK, joins the trace of our server: the SDK writes `traceparent` into
`params._meta` (SEP-414) and our server makes the client's span its parent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tooling

HERE = Path(__file__).resolve().parent
SDK = "opentelemetry-sdk"


@pytest.fixture(scope="session")
def official_traced_python() -> str:
    """A venv with the pinned official SDK and the OpenTelemetry SDK (cached)."""
    spec = f"{tooling.OFFICIAL_PYTHON_SDK} {SDK}"
    venv = tooling.CACHE / ("venv-" + tooling.OFFICIAL_PYTHON_SDK.replace("==", "-") + "-otel")
    python = venv / "bin" / "python"
    with tooling._locked("official-python-otel"):
        marker = venv / ".installed"
        if not marker.exists() or marker.read_text() != spec:
            tooling._run([sys.executable, "-m", "venv", "--clear", str(venv)], "a virtualenv")
            tooling._run(
                [str(python), "-m", "pip", "install", "-q", tooling.OFFICIAL_PYTHON_SDK, SDK],
                f"PyPI {spec}",
            )
            marker.write_text(spec)
    return str(python)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_official_client_call_joins_the_trace(
    official_traced_python: str, tmp_path: Path, mode: str
) -> None:
    exported = tmp_path / "server-spans.jsonl"
    server = [sys.executable, str(HERE / "app.py"), str(exported)]
    done = subprocess.run(
        [official_traced_python, str(HERE / "official_traced_client.py"), mode, "--", *server],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    ours = [json.loads(line) for line in exported.read_text().splitlines()]
    (root,) = [s for s in theirs if s["name"] == "agent turn"]
    (sent,) = [s for s in theirs if s["kind"] == "CLIENT" and "tools/call" in s["name"]]
    assert sent["trace_id"] == root["trace_id"]
    (served,) = [s for s in ours if s["name"] == "tools/call echo" and s["kind"] == "SERVER"]
    assert served["trace_id"] == root["trace_id"]  # one trace across both processes
    assert served["parent_id"] == sent["span_id"]  # their CLIENT span is our parent
    assert served["attributes"]["jsonrpc.request.id"] == sent["attributes"]["jsonrpc.request.id"]
