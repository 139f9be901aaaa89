"""Background tasks kept alive by a set until they finish (asyncio holds only weak
references to running tasks)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

__all__ = ["start_kept"]


def start_kept(tasks: set[asyncio.Task[Any]], coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Start `coro` as a task held in `tasks` until it is done."""
    task = asyncio.ensure_future(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task
