"""The `mcpgen` console script: a clear message, not a traceback, when the command line's
own dependency (typer) is not installed, e.g. after `pip install mcpgen[client]`."""

from __future__ import annotations

import importlib.util
import sys


def main() -> None:
    if importlib.util.find_spec("typer") is None:
        sys.stderr.write(
            "mcpgen: the command line needs typer: pip install 'mcpgen[cli]' (discover, "
            "tools, call, read) or 'mcpgen[codegen]' (regenerate, fetch-schemas)\n"
        )
        raise SystemExit(2)
    from mcpgen_codegen.cli import main as run  # noqa: PLC0415 (after the check)

    run()
