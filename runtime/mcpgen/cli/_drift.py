"""What a `--check` run of a module-writing command (`mcpgen stubs`, `mcpgen openapi`)
does with the text the generator would write: nothing when the committed file matches,
otherwise a short unified diff on stdout, a hint on stderr and exit status 1."""

from __future__ import annotations

import difflib
from pathlib import Path

import typer

__all__ = ["DIFF_LINES", "check_drift"]

DIFF_LINES = 60  # a drift report stays short; the rest is `... N more lines`


def check_drift(output: Path, text: str, *, source: str, command: str) -> None:
    """Compare `output` with `text`; on drift print the diff and exit 1.

    `source` names where `text` came from in the diff header and the hint ("server",
    "document"); `command` is what to run to write the module again."""
    old = output.read_text(encoding="utf-8") if output.exists() else ""
    if old == text:
        typer.echo(f"{output} is up to date")
        return
    diff = list(
        difflib.unified_diff(
            old.splitlines(), text.splitlines(), f"{output} (committed)", f"{output} ({source})",
            lineterm="",
        )
    )  # fmt: skip
    for line in diff[:DIFF_LINES]:
        typer.echo(line)
    if len(diff) > DIFF_LINES:
        typer.echo(f"... {len(diff) - DIFF_LINES} more lines")
    typer.echo(f"{output} drifted from the {source}; run `{command}` again", err=True)
    raise typer.Exit(1)
