"""Typed client modules for a server's tools (`mcpgen stubs`; `pip install 'mcpgen[stubs]'`).

`generate(client, path)` lists the connected server's tools and returns the text of a
module with one `msgspec.Struct` per input and output schema (written by
datamodel-code-generator) and a class of one typed async method per tool. Importing this
package is cheap: the generator is imported only when a module is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from mcpgen.stubs._render import ToolSpec, render

if TYPE_CHECKING:
    from mcpgen.client._client import Client

__all__ = ["ToolSpec", "generate", "render"]


async def generate(client: Client, path: Path, class_name: str = "Tools") -> str:
    """The module for every tool `client`'s server lists (all pages), formatted for `path`."""
    tools = [
        ToolSpec(
            name=tool.name,
            description="" if tool.description is msgspec.UNSET else tool.description,
            input_schema=tool.input_schema,
            output_schema=None if tool.output_schema is msgspec.UNSET else tool.output_schema,
        )
        for tool in await client.list_tools(refresh=True)
    ]
    return render(tools, client.server_info, path, class_name)
