"""MCP Apps in a real host (issue 25): headless Chromium runs a host page built from the
official TypeScript client and the ext-apps package's own host bridge (AppBridge),
connected to examples/apps/server.py over Streamable HTTP in both eras. The app renders
the tool's result, sorts it on a click, and a click on "+10%" calls the app-only
`reprice` tool through the host; the new price shows in the app and in the host's log.
A screenshot of each run goes to the test artifacts (MCPGEN_ARTIFACTS, default
.cache/artifacts)."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, need
from tests.tooling import node22, npm_bundle
from tests.transports.httpharness import serve

pytestmark = [pytest.mark.slow, pytest.mark.needs_node]

HOST = Path(__file__).parent / "host"
PACKAGES = (
    "@modelcontextprotocol/ext-apps@2.0.4",
    "@modelcontextprotocol/client@2.4.0",
    "esbuild@0.28.2",
    "playwright-core@1.65.1",
)
ARTIFACTS = Path(os.environ.get("MCPGEN_ARTIFACTS") or REPO / ".cache" / "artifacts")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    need(found is not None, "chromium (apt-get install -y chromium)", "chromium")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The host page and its bundle in a folder; the node_modules it was built from."""
    modules = npm_bundle("apps-host", *PACKAGES)
    out = tmp_path_factory.mktemp("apps-host")
    shutil.copy(HOST / "host.html", out / "host.html")
    proc = subprocess.run(
        [
            str(modules / ".bin" / "esbuild"),
            str(HOST / "host.js"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--log-level=error",
            f"--outfile={out / 'host.bundle.js'}",
        ],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out, modules


@contextmanager
def static_site(folder: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def example_server() -> Any:
    spec = importlib.util.spec_from_file_location(
        "apps_example_browser", REPO / "examples" / "apps" / "server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_app_renders_and_calls_its_app_only_tool_through_a_real_host(
    site: tuple[Path, Path], mode: str
) -> None:
    folder, modules = site
    browser = chromium()
    node = node22()
    module = example_server()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / f"apps-host-{mode}.png"
    screenshot.unlink(missing_ok=True)
    with static_site(folder) as origin:
        app = module.server.asgi_app(allowed_origins=[origin])
        with serve(app) as (url, _):
            config = {
                "nodeModules": str(modules),
                "chromium": browser,
                "url": f"{origin}/host.html?server={url}&mode={mode}",
                "screenshot": str(screenshot),
                "timeoutMs": 30_000,
            }
            proc = subprocess.run(
                [node, str(HOST / "drive.mjs"), json.dumps(config)],
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
    assert proc.stdout.strip(), proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0, json.dumps(seen, indent=1)[-4000:]
    assert seen["hostErrors"] == []
    assert seen["era"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert seen["rowsBefore"] == ["A-100", "B-200", "C-300"]
    assert seen["sortedByPrice"] == ["B-200", "C-300", "A-100"]
    assert seen["priceAfter"] == "4.68"
    assert seen["appStatus"] == "repriced B-200: 4.68"
    assert len(seen["hostCalls"]) == 1, json.dumps(seen, indent=1)[-3000:]
    (call,) = seen["hostCalls"]  # the app's call went through the host to the server
    assert call["name"] == "reprice" and call["arguments"] == {"sku": "B-200", "percent": 10}
    assert call["result"]["structuredContent"]["price"] == 4.68
    assert "app called reprice" in seen["hostLog"]
    assert screenshot.stat().st_size > 5_000  # a real picture
    assert module.PRODUCTS[1].price == 4.68  # the server's own state changed
