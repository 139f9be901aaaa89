"""OpenAPI → MCP at build time: `mcpgen openapi SPEC -o module.py` writes a module of
typed tools, one per operation of an HTTP API's OpenAPI 3.0/3.1 document, and this
package is what such a module calls at run time (`Api`, `ApiAuth`, `Operation`,
`Scheme`; httpx sends the requests). `generate` is the command's work as a function.

The `openapi` extra brings what the generator needs (datamodel-code-generator, ruff,
PyYAML) and what the module needs (httpx).
"""

from __future__ import annotations

from pathlib import Path

from mcpgen.openapi._api import Api, ApiAuth, Operation, Scheme

__all__ = ["Api", "ApiAuth", "Operation", "Scheme", "generate"]


def generate(
    source: str,
    path: Path,
    *,
    base_url: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    name_style: str = "snake",
    resources: tuple[str, ...] = (),
) -> tuple[str, list[str]]:
    """The module's text for the document at `source` (a file or URL) and the operations
    refused (each with its reason). `path` is where it will live: its ruff configuration
    formats it. `resources`: rules (as `include`'s) naming the GET operations served as
    resources or resource templates instead of tools."""
    from mcpgen.openapi._render import render  # noqa: PLC0415 (the generator's imports)
    from mcpgen.openapi._spec import load  # noqa: PLC0415

    doc = load(source, include, exclude, name_style, resources)
    return render(doc, path, base_url), doc.refused
