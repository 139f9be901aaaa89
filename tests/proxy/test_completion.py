"""Completion through a proxy, of one upstream (`completion_def`) and of several
(`routed_completion`): the reference, the argument, its value and the context all reach
the upstream as the client sent them, with or without a context."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, Proxy
from tests.proxy.completing_server import TEMPLATE

UPSTREAM = [sys.executable, str(Path(__file__).with_name("completing_server.py"))]


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("aggregated", [False, True], ids=["one upstream", "two upstreams"])
def test_completion_params_reach_the_upstream_unchanged(era: str, aggregated: bool) -> None:
    proxy = Proxy({"a": UPSTREAM, "b": UPSTREAM} if aggregated else UPSTREAM)
    prompt = "b_greet" if aggregated else "greet"

    async def main() -> list[list[str]]:
        async with Client.memory(proxy, era=era) as client:  # type: ignore[arg-type]
            asked: list[Any] = [
                ({"type": "ref/prompt", "name": prompt}, "name", "Ad", {"greeting": "Hi"}),
                ({"type": "ref/resource", "uri": TEMPLATE}, "topic", "mc", {"owner": "ada"}),
                ({"type": "ref/prompt", "name": prompt}, "greeting", "He", None),
            ]
            return [(await client.complete(*a)).completion.values for a in asked]

    with_context, on_template, without = asyncio.run(main())
    assert with_context == ["prompt", "name=Ad", '{"greeting": "Hi"}']
    assert on_template == ["template", "topic=mc", '{"owner": "ada"}']
    assert without == ["prompt", "greeting=He", "{}"]
