"""The generator's commands on the `mcpgen` command line.

`register` is the `mcpgen.cli` entry point: with the codegen extra installed it adds
`regenerate` and `fetch-schemas`; without it, the same two names answer with what to
install. `main` is the console script of earlier installs (now `mcpgen.cli:main`).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

__all__ = ["NEEDS", "main", "register"]

# What `pip install 'mcpgen[codegen]'` adds to the client extra's typer and httpx.
NEEDS = ("jinja2", "ruff")
COMMANDS = ("regenerate", "fetch-schemas")


def _missing() -> list[str]:
    return [name for name in NEEDS if importlib.util.find_spec(name) is None]


def register(app: typer.Typer) -> None:
    missing = _missing()
    if not missing:
        from mcpgen_codegen.cli import app as codegen  # noqa: PLC0415 (its deps are there)

        app.registered_commands.extend(codegen.registered_commands)
        return
    import typer  # noqa: PLC0415 (the command line runs: typer is there)

    def absent(name: str) -> None:
        def command() -> None:
            typer.echo(
                f"mcpgen {name} needs the codegen extra ({', '.join(missing)} missing): "
                "pip install 'mcpgen[codegen]'",
                err=True,
            )
            raise typer.Exit(2)

        needs = "(needs the codegen extra: pip install 'mcpgen[codegen]')"
        command.__doc__ = needs
        app.command(
            name,
            short_help=needs,  # whole in the command list, not cut to the list's width
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        )(command)

    for name in COMMANDS:
        absent(name)


def main() -> None:
    from mcpgen.cli import main as run  # noqa: PLC0415 (the runtime's command line)

    run([register])
