"""The typer app behind `mcpgen`: the runtime's commands, then the registered ones."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Annotated

import typer

import mcpgen
from mcpgen.cli._auth import login, logout
from mcpgen.cli._commands import COMMANDS
from mcpgen.cli._install import install
from mcpgen.cli._openapi import openapi
from mcpgen.cli._proxy import proxy
from mcpgen.cli._serve import serve
from mcpgen.cli._stubs import stubs

__all__ = ["GROUP", "build"]

GROUP = "mcpgen.cli"  # the entry-point group of packages adding commands
log = logging.getLogger("mcpgen.cli")


def _registered() -> list[Callable[[typer.Typer], None]]:
    found = []
    for point in entry_points(group=GROUP):
        try:
            found.append(point.load())
        except Exception:  # a broken add-on must not take the client commands with it
            log.exception("cannot load the mcpgen command line add-on %s", point.value)
    return found


def _version(asked: bool) -> None:
    if asked:
        typer.echo(f"mcpgen {mcpgen.__version__}")
        raise typer.Exit


def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """mcpgen: a generated, typed and fast MCP SDK."""


def build(extra: Sequence[Callable[[typer.Typer], None]] = ()) -> typer.Typer:
    app = typer.Typer(
        name="mcpgen",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain help text: rich markup would take `mcpgen[codegen]` or `[URL]` for style tags.
        rich_markup_mode=None,
    )
    app.callback()(_options)
    # The client commands take their own words (URL, names, `-- COMMAND ...`) verbatim.
    settings = {"allow_extra_args": False, "ignore_unknown_options": True}
    for command in COMMANDS:
        app.command(context_settings=settings)(command)
    app.command()(login)
    app.command()(logout)
    app.command()(serve)
    app.command()(install)
    app.command(context_settings=settings)(stubs)
    app.command()(openapi)
    app.command(context_settings=settings)(proxy)
    done: list[Callable[[typer.Typer], None]] = []
    for register in [*_registered(), *extra]:
        if register not in done:  # an add-on named twice registers once
            done.append(register)
            register(app)
    return app
