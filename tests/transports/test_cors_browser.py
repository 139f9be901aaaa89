"""A real browser (headless Chromium) on one 127.0.0.1 port calls an mcpgen server on
another: with the page's origin listed in `allowed_origins` the calls go through and the
page reads the session id; with it not listed the browser blocks them."""

from __future__ import annotations

import contextlib
import http.server
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen import Server
from tests.conftest import need
from tests.transports.httpharness import serve

pytestmark = pytest.mark.needs_chromium

PAGE = """<!doctype html>
<html><body><pre id="out">pending</pre>
<script>
const URL_ = %(url)s;
async function post(headers, body) {
  const response = await fetch(URL_, {
    method: "POST",
    headers: {"content-type": "application/json",
              "accept": "application/json, text/event-stream", ...headers},
    body: JSON.stringify(body),
  });
  return response;
}
async function run() {
  const out = document.getElementById("out");
  try {
    const init = await post({}, {jsonrpc: "2.0", id: 1, method: "initialize", params: {
      protocolVersion: "2025-11-25", capabilities: {},
      clientInfo: {name: "page", version: "1"}}});
    const sid = init.headers.get("mcp-session-id");
    const call = await post(
      {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"},
      {jsonrpc: "2.0", id: 2, method: "tools/call", params: {
        name: "echo", arguments: {text: "from the page"},
        _meta: {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}});
    const reply = await call.json();
    out.textContent = "RESULT " + JSON.stringify(
      {status: call.status, sid: sid, text: reply.result.content[0].text});
  } catch (error) {
    out.textContent = "BLOCKED " + error.name;
  }
}
run();
</script></body></html>
"""


def make_server() -> Server:
    server = Server("browser")

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


@contextlib.contextmanager
def page_server() -> Iterator[tuple[http.server.ThreadingHTTPServer, str]]:
    """A plain HTTP server on its own port, serving the page set on it later."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = self.server.page  # type: ignore[attr-defined]
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def run_page(url: str) -> str:
    """What the page shows once its script ran."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    need(found is not None, "chromium", "chromium")
    assert found is not None
    # Root in a container: Chromium's sandbox needs user namespaces it may not get.
    command = [found, "--headless", "--no-sandbox", "--disable-gpu"]
    command += ["--virtual-time-budget=10000", "--dump-dom", url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split('<pre id="out">', 1)[1].split("</pre>", 1)[0]


@pytest.mark.slow
@pytest.mark.parametrize("listed", ["page", "another", "none"])
def test_a_browser_page_calls_the_server_only_from_a_listed_origin(listed: str) -> None:
    with page_server() as (httpd, page_origin):
        origins = {"page": [page_origin], "another": ["http://127.0.0.1:1"], "none": None}
        app = make_server().asgi_app(allowed_origins=origins[listed])
        with serve(app) as (endpoint, _):
            httpd.page = (PAGE % {"url": json.dumps(endpoint)}).encode()  # type: ignore[attr-defined]
            shown = run_page(page_origin + "/")
    if listed == "page":
        assert shown.startswith("RESULT "), shown
        result = json.loads(shown[len("RESULT ") :])
        assert result["status"] == 200
        assert result["text"] == "from the page"
        assert result["sid"], "the page could not read Mcp-Session-Id"
    else:
        assert shown == "BLOCKED TypeError", shown  # the browser's CORS refusal
