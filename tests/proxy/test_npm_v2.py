"""The official v2 TypeScript client, pinned to 2026-07-28, through `mcpgen proxy` to
examples/everything.py forced to the legacy era: the client's stateless input round is
answered through the proxy, whose upstream call waits on a real `elicitation/create`.
Reuses the interop scenario script (tests/interop/npm_client_v2.mjs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_npm_clients import REQUEST_TIMEOUT_MS, V2_CLIENT, _run_client
from tests.processes import EVERYTHING, http_server
from tests.proxy.common import MCPGEN
from tests.tooling import node22, npm_package

UPSTREAM = ["--upstream-era", "legacy", "--", sys.executable, str(EVERYTHING)]

pytestmark = pytest.mark.needs_node


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_v2_client_pinned_modern_through_a_legacy_upstream(transport: str, tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "nodeModules": str(npm_package(V2_CLIENT)),
        "transport": transport,
        "mode": "2026-07-28",
        "timeoutMs": REQUEST_TIMEOUT_MS,
    }
    if transport == "stdio":
        config["command"], config["args"] = MCPGEN, ["proxy", *UPSTREAM]
        doc = _run_client(node22(), "npm_client_v2.mjs", config, None)
    else:
        log = tmp_path / "proxy.log"

        def command(port: int) -> list[str]:
            return [MCPGEN, "proxy", "--transport", "http", "--port", str(port), *UPSTREAM]

        with http_server(command, log) as url:
            config["url"] = url
            doc = _run_client(node22(), "npm_client_v2.mjs", config, log)
    assert doc["era"] == "modern"
    assert doc["protocolVersion"] == "2026-07-28"
    assert doc["serverRequests"] == []  # input came as an input-required result
    assert doc["inputRound"]["texts"] == ["Hello, Alice!"]
    assert doc["simpleText"] == ["This is a simple text response for testing."]
