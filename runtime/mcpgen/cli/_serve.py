"""`mcpgen serve SPEC`: run a `Server` found by an import path.

SPEC is `module:attr` (`weather.app:server`), a file with an attribute
(`examples/everything.py:server`), or either without `:attr`, in which case the
module's `server`, then `mcp`, is taken. A file's own directory is importable while it
loads (as `python file.py` would have it); a module is found from the current
directory or the `--path` given (what `mcpgen install` writes, so that the server
starts whatever directory the MCP client launches it from).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer

from mcpgen._api import Server

__all__ = ["load_server", "serve", "split_spec"]

DEFAULT_ATTRS = ("server", "mcp")


def split_spec(spec: str) -> tuple[str, str | None]:
    """(module or file, attribute or None); a drive letter's colon is not a separator."""
    where, sep, attr = spec.rpartition(":")
    if sep and attr.isidentifier() and where:
        return where, attr
    return spec, None


def _is_file(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise LookupError(f"no such file: {path}")
    name = f"mcpgen_served_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LookupError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module


def load_server(spec: str, paths: list[str] | None = None) -> Server:
    """The `Server` SPEC names (see the module docstring); LookupError when it cannot."""
    where, attr = split_spec(spec)
    for extra in reversed([*(paths or []), os.getcwd()]):
        if extra not in sys.path:
            sys.path.insert(0, extra)
    if _is_file(where):
        module = _import_file(Path(where).resolve())
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            if exc.name is not None and where.startswith(exc.name):
                raise LookupError(f"no module named {where!r}") from None
            raise
    names = (attr,) if attr else DEFAULT_ATTRS
    for name in names:
        found = getattr(module, name, None)
        if isinstance(found, Server):
            return found
        if found is not None:
            raise LookupError(f"{where}:{name} is a {type(found).__name__}, not an mcpgen.Server")
    raise LookupError(f"{where} has no {' or '.join(names)}: name the server, e.g. {where}:app")


def serve(
    spec: Annotated[str, typer.Argument(help="module:server, or path/to/file.py:server")],
    transport: Annotated[str, typer.Option("--transport", help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: the port.")] = 8000,
    path: Annotated[
        list[str] | None,
        typer.Option("--path", help="A directory to import from (repeatable)."),
    ] = None,
) -> None:
    """Run the mcpgen Server SPEC names, on stdio (default) or Streamable HTTP."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"--transport must be stdio or http, not {transport!r}")
    try:
        server = load_server(spec, path)
    except LookupError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=host, port=port)
