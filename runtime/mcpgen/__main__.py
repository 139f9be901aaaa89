"""`python -m mcpgen`: the `mcpgen` command line (what `mcpgen install` configures)."""

from __future__ import annotations

from mcpgen.cli import main

if __name__ == "__main__":  # importing the module (e.g. walking the package) runs nothing
    main()
