"""Render docs/reference/cli.md from the typer app behind `mcpgen`.

    python -m tests.docs.cli_reference          # rewrite the page
    python -m tests.docs.cli_reference --check  # exit 1 when the page is stale

tests/docs/test_cli_reference.py fails when the committed page differs from what this
renders, so a new command or option shows up in the reference with the change that adds
it. The commands the generator registers (`regenerate`, `fetch-schemas`) are included:
the dev install, which builds the docs, has them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from mcpgen.cli._app import build

# Typer carries its own copy of click: commands are handled by their attributes.
Command = Any

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md"
CODEGEN = {"regenerate", "fetch-schemas"}

HEADER = """\
# Command line reference

Every `mcpgen` command with its arguments and options, rendered from the command line's
own definitions by `python -m tests.docs.cli_reference` (a test fails when this page is
stale). The [command line guide](../guide/cli.md) shows them at work. The `client` extra
brings the command ([Installation](../install.md)); `regenerate` and `fetch-schemas` need
the `codegen` extra as well. `mcpgen --version` prints the installed version.
"""


def _cell(text: str) -> str:
    return _prose(" ".join(text.split()).replace("|", "\\|"))


def _prose(text: str) -> str:
    """Brackets outside code spans escaped: autorefs would read `[-- COMMAND]` as a link."""
    parts = text.split("`")
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("[", "\\[").replace("]", "\\]")
    return "`".join(parts)


def _command(name: str, command: Command, root: Any) -> list[str]:
    ctx = command.context_class(command, info_name=name, parent=root)
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## `mcpgen {name}`", ""]
    if name in CODEGEN:
        lines += ["*Needs the `codegen` extra.*", ""]
    lines += [
        _prose((command.help or "").strip()),
        "",
        "```text",
        f"mcpgen {name} {usage}",
        "```",
        "",
    ]
    # Each parameter's help record is what `mcpgen NAME --help` prints for it.
    records = [record for p in command.get_params(ctx) if (record := p.get_help_record(ctx))]
    if records:
        lines += ["| argument or option | what |", "|---|---|"]
        for names, what in records:
            option = " ".join(names.split()).replace("|", "\\|")
            lines.append(f"| `{option}` | {_cell(what)} |")
        lines.append("")
    return lines


def render() -> str:
    group = typer.main.get_command(build())
    root = group.context_class(group, info_name="mcpgen")
    lines = [HEADER, f"{(group.help or '').strip()}", ""]
    lines += ["| command | what |", "|---|---|"]
    names = list(group.commands)
    for name in names:
        summary = group.commands[name].get_short_help_str(limit=200)
        lines.append(f"| [`{name}`](#mcpgen-{name}) | {_cell(summary)} |")
    lines.append("")
    for name in names:
        lines += _command(name, group.commands[name], root)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text() != text:
            sys.stderr.write(f"{PAGE} is stale: run python -m tests.docs.cli_reference\n")
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
