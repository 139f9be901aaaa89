"""The `mcpgen` command line (`pip install 'mcpgen[client]'`).

Client commands (`discover`, `tools`, `call`, `read`, `prompts`, `prompt`, `resources`,
`templates`: see `_commands`; `--auth` and `--header` on a URL), `login` and `logout`
(OAuth grants kept for later commands: see `_auth`), `serve` (run a server from an
import path) and `install` (add it to an MCP client's configuration). Other packages
add commands through the `mcpgen.cli` entry-point group, each a `register(app)`
function: the generator's `regenerate` and `fetch-schemas` arrive that way, so this
package never imports it.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

__all__ = ["main"]

Register = Callable[["typer.Typer"], None]


def main(extra: Sequence[Register] = ()) -> None:
    """Run the command line; `extra`: more `register(app)` functions to apply."""
    if importlib.util.find_spec("typer") is None:
        sys.stderr.write(
            "mcpgen: the command line needs typer, which the client extra installs: "
            "pip install 'mcpgen[client]'\n"
        )
        raise SystemExit(2)
    from mcpgen.cli._app import build  # noqa: PLC0415 (typer is known to be there now)

    build(extra)()
