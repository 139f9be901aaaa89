"""An mcpgen stdio server with one tool that runs only as a task (Tasks extension).

Run: `python tests/cli/task_server.py`.
"""

from __future__ import annotations

import asyncio

from mcpgen import Server

server = Server("task-only", "1.0", task_poll_seconds=0.05)


@server.tool(task="required")
async def report(topic: str) -> str:
    """Write a report on `topic`, slowly."""
    await asyncio.sleep(0.2)
    return f"report on {topic}"


if __name__ == "__main__":
    server.run()
