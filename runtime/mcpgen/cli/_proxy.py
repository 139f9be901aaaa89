"""`mcpgen proxy (URL | -- COMMAND ARGS... | --upstream NAME=TARGET ...)`: serve upstream
MCP servers to clients of both eras, on stdio or Streamable HTTP (see `mcpgen.proxy` and
docs/guide/proxy.md).

    mcpgen proxy --transport http --port 8080 -- python server.py
    mcpgen proxy --upstream-era legacy https://example.test/mcp
    mcpgen proxy --upstream weather=https://example.test/mcp --upstream 'files=python fs.py'
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from mcpgen.cli._run import Words, split
from mcpgen.proxy import Proxy, UpstreamEra

__all__ = ["proxy"]

_ERAS: dict[str, UpstreamEra] = {"auto": "auto", "legacy": "legacy", "modern": "modern"}


def _mounts(specs: list[str]) -> dict[str, str | list[str]]:
    """`NAME=TARGET` options as the prefix -> upstream mapping (TARGET: a URL, or a
    command line quoted as a shell would split it)."""
    mounts: dict[str, str | list[str]] = {}
    for spec in specs:
        name, sep, target = spec.partition("=")
        if not sep or not name or not target.strip():
            raise typer.BadParameter(
                f"--upstream takes NAME=URL or NAME='COMMAND ARGS', not {spec!r}"
            )
        if name in mounts:
            raise typer.BadParameter(f"--upstream {name!r} is given twice")
        url = target.startswith(("http://", "https://"))
        mounts[name] = target if url else shlex.split(target)
    return mounts


def _root_uri(value: str) -> str:
    """A `--root`: a URI as given, a path as its absolute `file://` URI."""
    return value if "://" in value else Path(value).resolve().as_uri()


def proxy(
    words: Words = None,
    transport: Annotated[str, typer.Option("--transport", help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: the port.")] = 8000,
    upstream_era: Annotated[
        str, typer.Option("--upstream-era", help="auto (probe), legacy or modern.")
    ] = "auto",
    upstream: Annotated[
        list[str] | None,
        typer.Option(
            "--upstream",
            help="NAME=URL or NAME='COMMAND ARGS' (repeat): serve several upstreams, "
            "their tools and prompts named NAME_...",
        ),
    ] = None,
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            help="A root (a URI, or a directory path) the upstream gets when it asks for "
            "roots (repeat for several).",
        ),
    ] = None,
) -> None:
    """Serve the upstream server (URL, or a command after `--`; or several `--upstream`)
    to clients of both eras."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"--transport must be stdio or http, not {transport!r}")
    roots = None if root is None else [_root_uri(value) for value in root]
    era = _ERAS.get(upstream_era)
    if era is None:
        raise typer.BadParameter(
            f"--upstream-era must be auto, legacy or modern, not {upstream_era!r}"
        )
    if upstream:
        if words:
            raise typer.BadParameter("give either --upstream options or one URL / command")
        server = Proxy(_mounts(upstream), upstream_era=era, roots=roots)
    else:
        target, _ = split(words or [])
        server = Proxy(target, upstream_era=era, roots=roots)
    if transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=host, port=port)
