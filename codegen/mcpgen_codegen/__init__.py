"""mcpgen's code generator: pinned MCP JSON Schemas in, msgspec structs out.

Owns: reading the pins and policy in `schema/`, fetching and verifying the upstream
schema files, patching them, lowering JSON Schema to a small frozen IR, choosing a
strategy for every union, naming, rendering through jinja2, formatting with the
pinned ruff, and checking the result imports and decodes.

Knows nothing about the protocol at run time: it is used at build time only, and
nothing under `mcpgen` or `mcpgen_types` imports it.
"""

from __future__ import annotations

__all__: list[str] = []
