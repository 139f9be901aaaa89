"""`mcpgen stubs TARGET -o module.py [--class-name Tools] [--check]`: write a typed client
module for the server's tools, or (`--check`) exit 1 with a diff when the committed one
no longer matches what the server would give.

    mcpgen stubs -o weather_tools.py -- python weather_server.py
    mcpgen stubs http://127.0.0.1:8000/mcp -o weather_tools.py --check
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcpgen.cli._drift import check_drift
from mcpgen.cli._run import Capabilities, Era, Transport, Words, run, split
from mcpgen.client._client import Client

__all__ = ["stubs"]

Output = Annotated[Path, typer.Option("--output", "-o", help="The module to write or check.")]
ClassName = Annotated[str, typer.Option("--class-name", help="The generated class's name.")]
Check = Annotated[
    bool, typer.Option("--check", help="Write nothing; print a diff and exit 1 on drift.")
]


def stubs(
    output: Output,
    words: Words = None,
    class_name: ClassName = "Tools",
    check: Check = False,
    era: Era = "auto",
    transport: Transport = "http",
    capability: Capabilities = None,
) -> None:
    """Write a typed client module for the server's tools: stubs -o FILE URL | -- COMMAND."""
    from mcpgen.stubs import generate  # noqa: PLC0415 (keeps the other commands light)

    target, _ = split(words or [])
    path = output.resolve()

    async def work(client: Client) -> str:
        return await generate(client, path, class_name)

    text, _ = run(
        target, era, work, transport, capabilities=capability
    )  # a missing extra: exit 2, said why
    if not check:
        path.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")
        return
    check_drift(output, text, source="server's tools", command="mcpgen stubs")
