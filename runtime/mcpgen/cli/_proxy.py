"""`mcpgen proxy (URL | -- COMMAND ARGS...)`: serve an upstream MCP server to clients of
both eras, on stdio or Streamable HTTP (see `mcpgen.proxy` and docs/guide/proxy.md).

    mcpgen proxy --transport http --port 8080 -- python server.py
    mcpgen proxy --upstream-era legacy https://example.test/mcp
"""

from __future__ import annotations

from typing import Annotated

import typer

from mcpgen.cli._run import Words, split
from mcpgen.proxy import Proxy, UpstreamEra

__all__ = ["proxy"]

_ERAS: dict[str, UpstreamEra] = {"auto": "auto", "legacy": "legacy", "modern": "modern"}


def proxy(
    words: Words = None,
    transport: Annotated[str, typer.Option("--transport", help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: the port.")] = 8000,
    upstream_era: Annotated[
        str, typer.Option("--upstream-era", help="auto (probe), legacy or modern.")
    ] = "auto",
) -> None:
    """Serve the upstream server (URL, or a command after `--`) to clients of both eras."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"--transport must be stdio or http, not {transport!r}")
    era = _ERAS.get(upstream_era)
    if era is None:
        raise typer.BadParameter(
            f"--upstream-era must be auto, legacy or modern, not {upstream_era!r}"
        )
    target, _ = split(words or [])
    server = Proxy(target, upstream_era=era)
    if transport == "stdio":
        server.run()
    else:
        server.run(transport="http", host=host, port=port)
