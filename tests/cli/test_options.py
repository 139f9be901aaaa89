"""The client commands' shared options, declared once (`client_command`): each of the
eight commands has exactly them, under the names and help texts the CLI reference is
generated from, and a command made with `client_command` receives them as given."""

from __future__ import annotations

from typing import Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from mcpgen.cli._app import build
from mcpgen.cli._run import Common, client_command

CLIENT_COMMANDS = (
    *("discover", "tools", "call", "read"),
    *("prompts", "prompt", "resources", "templates"),
)

SHARED = [
    ("words", [], "URL ..., ... URL, or ... -- COMMAND ARGS...", "None"),
    ("era", ["--era"], "auto (probe), modern (2026-07-28) or legacy (initialize).", "'auto'"),
    (
        "transport",
        ["--transport"],
        "For a URL: http (Streamable HTTP, then HTTP+SSE if refused) or sse (HTTP+SSE).",
        "'http'",
    ),
    ("as_json", ["--json"], "Print the result as the negotiated revision encodes it.", "False"),
    (
        "auth",
        ["--auth"],
        "For a URL: oauth (the grant `mcpgen login` kept; logs in when there is none)"
        " or bearer:TOKEN.",
        "None",
    ),
    (
        "header",
        ["--header", "-H"],
        "For a URL: an HTTP header 'Name: value' (repeatable).",
        "None",
    ),
    (
        "capability",
        ["--capability"],
        "A client capability to declare (repeatable): elicitation (the default: questions are"
        " asked on the terminal), sampling (declared, every request refused), roots (an empty"
        " list), or none. A server may list some tools only to capable clients.",
        "None",
    ),
]


def _params(command: Any) -> list[tuple[str, list[str], str, str]]:
    return [
        (
            str(p.name),
            p.opts if p.opts != [p.name] else [],
            str(getattr(p, "help", "")),
            repr(p.default),
        )
        for p in command.params
    ]


def test_every_client_command_has_exactly_the_shared_options() -> None:
    group = typer.main.get_command(build())
    assert isinstance(group, TyperGroup)
    commands = group.commands
    for name in CLIENT_COMMANDS:
        assert _params(commands[name]) == SHARED, name
    assert commands["tools"].help == "List the server's tools."
    assert str(commands["call"].help).startswith("Call TOOL with a JSON object of arguments")


def test_client_command_hands_the_options_over_as_given() -> None:
    seen: list[tuple[list[str], Common]] = []

    def probe(words: list[str], opts: Common) -> None:
        """Record what it was given."""
        seen.append((words, opts))

    command = client_command(probe)
    assert (command.__name__, command.__doc__) == ("probe", "Record what it was given.")
    app = typer.Typer()
    app.command(context_settings={"ignore_unknown_options": True})(command)
    app.command()(lambda: None)  # two commands: typer keeps the command's name
    runner = CliRunner()
    given = ["probe", "http://h/mcp", "x", "--era", "legacy", "--json", "-H", "A: b"]
    given += ["--capability", "sampling", "--capability", "roots"]
    done = runner.invoke(app, [*given, "--auth", "bearer:t", "--header", "C: d"])
    assert done.exit_code == 0, done.output
    assert seen == [
        (
            ["http://h/mcp", "x"],
            Common("legacy", "http", True, "bearer:t", ["A: b", "C: d"], ["sampling", "roots"]),
        )
    ]
    runner.invoke(app, ["probe"])
    assert seen[-1] == ([], Common("auto", "http", False, None, None, None))
