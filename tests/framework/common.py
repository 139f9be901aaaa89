"""What the framework-layer tests share."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpgen import types as t

ERAS = ["modern", "legacy"]


def run(coro: Any) -> Any:
    """Run `coro` to its end, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, 60))


def text_of(result: Any) -> str:
    """The text of a result's first content block."""
    block = result.content[0]
    assert isinstance(block, t.TextContent), result
    return block.text
