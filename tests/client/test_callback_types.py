"""The client callbacks' Protocols are public (`mcpgen.ElicitationCallback`, ...): a
user annotates a callback with one and mypy checks the function against the signature
the client calls it with, and a `Client` accepts what the Protocol accepts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import mcpgen
from mcpgen import Client, Context, Server
from mcpgen_types import latest as t
from tests.typecheck import check_marks

SOURCE = """\
from __future__ import annotations

from collections.abc import Mapping

from mcpgen import (
    Client,
    ElicitationCallback,
    LogCallback,
    ProgressCallback,
    RootsCallback,
    SamplingCallback,
    Server,
)
from mcpgen_types import latest as t


async def elicit(params: t.ElicitRequestParams) -> t.ElicitResult:
    return t.ElicitResult(action="decline")


def elicit_dict(params: t.ElicitRequestParams) -> Mapping[str, object]:
    return {"action": "cancel"}


def sample(params: t.CreateMessageRequestParams) -> t.CreateMessageResult:
    return t.CreateMessageResult(role="assistant", content=t.TextContent(text="x"), model="m")


def roots() -> list[t.Root | str]:
    return ["file:///tmp"]


def log(level: str, data: object, logger: str | None) -> None:
    pass


async def progress(progress: float, total: float | None, message: str | None) -> None:
    pass


on_elicitation: ElicitationCallback = elicit
on_elicitation_dict: ElicitationCallback = elicit_dict
on_sampling: SamplingCallback = sample
on_roots: RootsCallback = roots
on_log: LogCallback = log
on_progress: ProgressCallback = progress


def takes_text(text: str) -> str:
    return text


def wrong_answer(params: t.ElicitRequestParams) -> int:
    return 1


bad_elicitation: ElicitationCallback = takes_text  # E: assignment
bad_answer: ElicitationCallback = wrong_answer  # E: assignment
bad_log: LogCallback = takes_text  # E: assignment
bad_roots: RootsCallback = log  # E: assignment
Client.memory(Server("s"), on_roots=roots)
Client.memory(Server("s"), on_sampling=elicit)  # E: arg-type
"""


@pytest.mark.slow
def test_mypy_checks_a_callback_against_its_protocol(tmp_path: Path) -> None:
    check_marks(SOURCE, tmp_path)


def test_the_protocols_are_exported_lazily_with_the_client_side() -> None:
    names = {"CallbackError", "ElicitationCallback", "LogCallback", "ProgressCallback"}
    names |= {"RootsCallback", "SamplingCallback"}
    assert names <= set(mcpgen.__all__)
    from mcpgen.client import _callbacks

    for name in names:
        assert getattr(mcpgen, name) is getattr(_callbacks, name)


def test_an_annotated_callback_answers_the_server() -> None:
    server = Server("typed-callbacks")

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return answer.action

    async def decline(params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="decline")

    on_elicitation: mcpgen.ElicitationCallback = decline

    async def main() -> list[str]:
        seen = []
        for era in ("modern", "legacy"):
            async with Client.memory(server, era=era, on_elicitation=on_elicitation) as client:
                result = await client.call_tool("ask", {})
                seen.append(result.content[0].text)  # type: ignore[union-attr]
        return seen

    assert asyncio.run(asyncio.wait_for(main(), 60)) == ["decline", "decline"]
