"""Finding the `Server` a SPEC names (`mcpgen serve SPEC`, and each of its workers).

SPEC is `module:attr` (`weather.app:server`), a file with an attribute
(`examples/everything.py:server`), or either without `:attr`, in which case the
module's `server`, then `mcp`, is taken. A file's own directory is importable while it
loads (as `python file.py` would have it); a module is found from the current
directory or the `--path` given. No typer here: a worker imports this module only.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from mcpgen.server._run import importing_for_serve
from mcpgen.server._server import Server

__all__ = ["load_server", "split_spec"]

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


def _import(where: str) -> ModuleType:
    if _is_file(where):
        return _import_file(Path(where).resolve())
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name is not None and where.startswith(exc.name):
            raise LookupError(f"no module named {where!r}") from None
        raise


def load_server(spec: str, paths: list[str] | None = None) -> Server:
    """The `Server` SPEC names (see the module docstring); LookupError when it cannot."""
    where, attr = split_spec(spec)
    for extra in reversed([*(paths or []), os.getcwd()]):
        if extra not in sys.path:
            sys.path.insert(0, extra)
    with importing_for_serve(where):
        module = _import(where)
    names = (attr,) if attr else DEFAULT_ATTRS
    for name in names:
        found = getattr(module, name, None)
        if isinstance(found, Server):
            return found
        if found is not None:
            raise LookupError(f"{where}:{name} is a {type(found).__name__}, not an mcpgen.Server")
    raise LookupError(f"{where} has no {' or '.join(names)}: name the server, e.g. {where}:app")
