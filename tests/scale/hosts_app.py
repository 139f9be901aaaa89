"""The server every simulated host of tests/scale/test_hosts.py runs
(`mcpgen serve tests/scale/hosts_app.py:server --workers K --host 127.0.0.X`).

`where` says which host and worker answered (`HOSTS_TEST_LABEL`, set per host, and the
process id) and what the request looked like once it arrived: the forwarded scheme
header, the `Host` header and the client address uvicorn took from `X-Forwarded-For`.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from mcpgen import Context, InputRequired, Server, elicit_form

FORM = {"type": "object", "properties": {"sure": {"type": "boolean"}}}

server = Server("hosts", "1.0")


@server.tool
def where(ctx: Context) -> str:
    """Which host and worker served this request, and what reached it."""
    request = ctx.request
    assert request is not None
    return json.dumps(
        {
            "host": os.environ.get("HOSTS_TEST_LABEL", "?"),
            "pid": os.getpid(),
            "proto": request.headers.get("x-forwarded-proto"),
            "host_header": request.headers.get("host"),
            "client": request.client[0] if request.client else None,
        }
    )


@server.tool
def confirm(ctx: Context, path: str) -> Any:
    """Asks first (the question's state sealed with the state keys), then answers."""
    answer = ctx.input("confirm")
    if answer is None:
        return InputRequired({"confirm": elicit_form(f"Delete {path}?", FORM)}, state=path)
    return f"{answer.action}: {ctx.state} on {os.environ.get('HOSTS_TEST_LABEL', '?')}"


@server.tool
async def chatty(ctx: Context) -> str:
    """Three log messages, then the result: a stream of several events."""
    for word in ("one", "two", "three"):
        ctx.info(word)
        await asyncio.sleep(0.01)
    return "done"


@server.tool(task="optional")
async def slow(seconds: float) -> str:
    """Sleeps, then says so; a task when the client asks for one."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"
