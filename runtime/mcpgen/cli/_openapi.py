"""`mcpgen openapi SPEC -o module.py`: write a module of typed MCP tools for an HTTP
API's OpenAPI 3 document (a file or an http(s) URL), or (`--check`) exit 1 with a diff
when the committed module no longer matches the document.

    mcpgen openapi openapi.json -o inventory_tools.py --base-url https://api.example.com
    mcpgen openapi https://api.example.com/openapi.json -o tools.py --include tag:items
    mcpgen openapi openapi.json -o inventory_tools.py --check
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mcpgen._errors import ConfigurationError
from mcpgen.cli._drift import check_drift

__all__ = ["openapi"]

Output = Annotated[Path, typer.Option("--output", "-o", help="The module to write or check.")]
BaseUrl = Annotated[
    str | None,
    typer.Option("--base-url", help="The API's URL (default: the document's first server)."),
]
Include = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        help="Only these operations: tag:NAME, op:OPERATION_ID, path:GLOB, or a bare "
        "pattern matched against all three (repeatable).",
    ),
]
Exclude = Annotated[
    list[str] | None, typer.Option("--exclude", help="Leave these out (as --include).")
]
Resources = Annotated[
    list[str] | None,
    typer.Option(
        "--resource",
        help="Serve these GET operations as resources (templates when the path has "
        "parameters) instead of tools: rules as --include's (repeatable).",
    ),
]
NameStyle = Annotated[
    str, typer.Option("--name-style", help="Tool names: snake (get_item) or operation (getItem).")
]
Check = Annotated[
    bool, typer.Option("--check", help="Write nothing; print a diff and exit 1 on drift.")
]


def openapi(
    spec: Annotated[str, typer.Argument(help="The OpenAPI 3.0/3.1 document: a file or a URL.")],
    output: Output,
    base_url: BaseUrl = None,
    include: Include = None,
    exclude: Exclude = None,
    name_style: NameStyle = "snake",
    resource: Resources = None,
    check: Check = False,
) -> None:
    """Write typed MCP tools for an HTTP API from its OpenAPI document."""
    if name_style not in ("snake", "operation"):
        raise typer.BadParameter("--name-style is snake or operation")
    try:
        from mcpgen.openapi import generate  # noqa: PLC0415 (the generator's imports)

        text, refused = generate(
            spec,
            output.resolve(),
            base_url=base_url,
            include=tuple(include or ()),
            exclude=tuple(exclude or ()),
            name_style=name_style,
            resources=tuple(resource or ()),
        )
    except ImportError as exc:
        typer.echo(f"`mcpgen openapi` needs the openapi extra ({exc.name}): "
                   "pip install 'mcpgen[openapi]'", err=True)  # fmt: skip
        raise typer.Exit(2) from None
    except ConfigurationError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for line in refused:
        typer.echo(f"refused: {line}", err=True)
    if not check:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")
        return
    check_drift(output, text, source="document", command="mcpgen openapi")
