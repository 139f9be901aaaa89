"""The server of the scale-out benchmark (bench/scaleout.py): one `echo` tool and nothing
else, so that what a call costs is mcpgen's own (HTTP, JSON-RPC, the Redis stores).

    mcpgen serve bench/scaleout_server.py:server --transport http --workers N --redis URL
"""

from __future__ import annotations

from mcpgen import Server

server = Server("scaleout", "1.0")


@server.tool
def echo(text: str) -> str:
    """Returns `text`."""
    return text
