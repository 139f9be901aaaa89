"""The generator's commands, `regenerate` and `fetch-schemas`: `mcpgen_codegen.launch`
adds them to the `mcpgen` command line (`python -m mcpgen_codegen.cli` runs them alone).
Generator modules are imported only when their command runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from mcpgen_codegen.config import GenerationError
from mcpgen_codegen.source import ENV_SCHEMA_DIR, cache_dir, fetch_schemas, resolve_schema_dir

app = typer.Typer(
    name="mcpgen",
    help="mcpgen: a generated, typed and fast MCP SDK.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

SchemaDir = Annotated[
    Path | None,
    typer.Option(
        "--schema-dir",
        help=f"Directory holding the pinned schemas (else ${ENV_SCHEMA_DIR}, else the user cache).",
    ),
]
Root = Annotated[
    Path | None,
    typer.Option(
        "--root", help="Repository root (default: the nearest one holding schema/pins.toml)."
    ),
]


def _fail(exc: GenerationError) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


@app.command()
def regenerate(
    check: Annotated[
        bool, typer.Option("--check", help="Render in memory; print a diff and exit 1 on drift.")
    ] = False,
    only: Annotated[
        str | None, typer.Option("--only", help="Regenerate one revision, e.g. 2026-07-28.")
    ] = None,
    schema_dir: SchemaDir = None,
    root: Root = None,
) -> None:
    """Regenerate generated/mcpgen_types from schema/ (pins, patches, policy)."""
    from mcpgen_codegen.generate import Project, drift, find_root, generate, write  # noqa: PLC0415

    try:
        project = Project.load(root or find_root())
        directory = resolve_schema_dir(schema_dir)
        if directory == cache_dir():
            # No directory was named: make sure the user cache holds every pinned file.
            for line in fetch_schemas(project.pins, directory, only=only):
                if "fetched" in line:
                    typer.echo(line, err=True)
        result = generate(project, directory, only)
    except GenerationError as exc:
        _fail(exc)
        return
    full = only is None
    if check:
        diffs = drift(project, result, full)
        if diffs:
            sys.stdout.write("".join(diffs))
            typer.echo(
                f"generated code drifted in {len(diffs)} file(s); run `mcpgen regenerate`", err=True
            )
            raise typer.Exit(1)
        files, checked = len(result.files), result.checked
        typer.echo(f"generated code is up to date ({files} files, {checked} definitions decodable)")
        return
    changed = write(project, result, full)
    for line in changed:
        typer.echo(f"wrote {line}")
    typer.echo(f"{len(changed)} file(s) changed; {result.checked} definitions decodable")


@app.command("fetch-schemas")
def fetch(
    dest: Annotated[
        Path | None, typer.Option("--dest", help="Target directory (default: the user cache).")
    ] = None,
    url_template: Annotated[
        str | None,
        typer.Option(
            "--url-template", help="Override pins.toml's url_template ({repo}, {commit}, {path})."
        ),
    ] = None,
    only: Annotated[str | None, typer.Option("--only", help="Fetch one revision.")] = None,
    root: Root = None,
) -> None:
    """Download every pinned schema, verify its sha256 and store it in the cache."""
    from mcpgen_codegen.generate import Project, find_root  # noqa: PLC0415

    try:
        project = Project.load(root or find_root())
        for line in fetch_schemas(
            project.pins, dest or cache_dir(), url_template=url_template, only=only
        ):
            typer.echo(line)
    except GenerationError as exc:
        _fail(exc)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
