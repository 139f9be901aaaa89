"""`python -m mcpgen`: the `mcpgen` command line (what `mcpgen install` configures)."""

from __future__ import annotations

from mcpgen.cli import main

main()
