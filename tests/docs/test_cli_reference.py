"""docs/reference/cli.md is what tests/docs/cli_reference.py renders from the typer app."""

from __future__ import annotations

import pytest

from tests.docs import cli_reference

pytestmark = pytest.mark.docs


def test_the_committed_cli_reference_is_fresh() -> None:
    assert cli_reference.PAGE.read_text() == cli_reference.render(), (
        "docs/reference/cli.md is stale: run python -m tests.docs.cli_reference"
    )


def test_every_command_and_option_is_on_the_page() -> None:
    import typer

    from mcpgen.cli._app import build

    page = cli_reference.render()
    group = typer.main.get_command(build())
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        assert f"## `mcpgen {name}`" in page
        for param in command.params:
            if param.param_type_name != "option" or param.hidden:
                continue
            for option in param.opts:
                assert f"{option}" in page, (name, option)
