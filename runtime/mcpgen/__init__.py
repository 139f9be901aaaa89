"""mcpgen: a code-generated, typed and fast Model Context Protocol SDK.

The protocol types of every pinned revision live in `mcpgen_types` (generated from
the upstream JSON Schemas); `mcpgen.types` re-exports the newest modern revision.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
