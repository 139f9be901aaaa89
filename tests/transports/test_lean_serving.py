"""What an HTTP server process loads and does per request, beyond serving: no access
line built for a log level that drops it, no h11 package when httptools serves, and a
`mcpgen serve --workers` worker without the command line's packages (typer, rich,
click). Each import check runs in a fresh interpreter, so other tests' imports do not
count."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from mcpgen import Server
from mcpgen.transports._uvicorn import uvicorn_server


def _fresh(code: str) -> object:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("level", "lines"), [("warning", False), ("error", False), ("info", True), ("debug", True)]
)
def test_access_lines_only_where_the_log_level_shows_them(level: str, lines: bool) -> None:
    server = uvicorn_server(Server("lean", "1").asgi_app(), log_level=level)
    assert server.config.access_log is lines


def test_an_explicit_access_log_setting_wins() -> None:
    app = Server("lean", "1").asgi_app()
    assert uvicorn_server(app, log_level="warning", access_log=True).config.access_log is True


def test_httptools_serving_leaves_h11_unloaded() -> None:
    loaded = _fresh(
        "import json, sys\n"
        "from mcpgen import Server\n"
        "from mcpgen.transports._uvicorn import uvicorn_server\n"
        "server = uvicorn_server(Server('lean', '1').asgi_app(), http='httptools')\n"
        "print(json.dumps([server.config.http.__name__, 'h11' in sys.modules]))\n"
    )
    assert loaded == ["HeaderDeadlineHttpToolsProtocol", False]


def test_h11_serving_still_gets_the_header_deadline() -> None:
    app = Server("lean", "1").asgi_app()
    assert uvicorn_server(app, http="h11").config.http.__name__ == "HeaderDeadlineH11Protocol"


def test_a_serve_worker_loads_no_command_line_package() -> None:
    loaded = _fresh(
        "import json, sys\n"
        "import mcpgen.cli._worker\n"
        "print(json.dumps(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules)))\n"
    )
    assert loaded == []


def test_an_async_tool_call_waits_without_a_task_of_its_own() -> None:
    """While a modern `tools/call` runs, the request waits on its response stream's
    waiter: the only tasks are the request's, the tool's and the disconnect watch (no
    task parked on an `Event.wait`)."""
    from tests.transports.asgidriver import post
    from tests.transports.httpharness import MODERN, modern_headers

    server = Server("lean", "1")
    seen: list[list[str]] = []

    @server.tool
    async def look() -> str:
        """The tasks alive now."""
        await asyncio.sleep(0)
        seen.append(sorted(t.get_coro().__qualname__ for t in asyncio.all_tasks()))
        return "looked"

    async def scenario() -> tuple[int, bytes]:
        app = server.asgi_app()
        params = {"name": "look", "arguments": {}, "_meta": MODERN}
        frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        status, _, body = await post(app, modern_headers("tools/call", "look"), frame)
        return status, body

    status, body = asyncio.run(scenario())
    assert status == 200 and b"looked" in body
    assert seen and not [name for name in seen[0] if name == "Event.wait"], seen
    assert "disconnected" in seen[0]
