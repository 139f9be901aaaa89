"""The workload on the official MCP SDK 2.3's ``MCPServer``: stateless, JSON responses,
one uvicorn worker; the stack's clients opened in the server's lifespan and reached
through ``ctx.request_context.lifespan_context``.

    python bench/workload/servers/official_server.py --port 8202 --api URL --redis URL

With ``--workers N`` (N > 1) uvicorn's own workers serve the port: each imports this
module and builds the app with `app()` from the settings left in the environment.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _stacks


def build(stack: str, api: str, redis_url: str) -> Any:
    lifespan = _stacks.lifespan(stack, api, redis_url)
    mcp: Any = MCPServer("workload", version="1.0.0", lifespan=lifespan)

    @mcp.tool(structured_output=False)
    async def search_products(
        ctx: Context, category: str, min_price: float, max_price: float, limit: int = 10
    ) -> str:
        """Products of a category within a price range, with the ten most popular."""
        tools = ctx.request_context.lifespan_context
        return await tools.search_products(category, min_price, max_price, limit)

    @mcp.tool(structured_output=False)
    async def get_user_cart(ctx: Context, user_id: int) -> str:
        """A user's cart, its first product and the user's recent items."""
        return await ctx.request_context.lifespan_context.get_user_cart(user_id)

    @mcp.tool(structured_output=False)
    async def checkout(ctx: Context, user_id: int, items: list[dict[str, int]]) -> str:
        """Price a cart and record the order."""
        return await ctx.request_context.lifespan_context.checkout(user_id, items)

    return mcp


def app() -> Any:
    """The ASGI app, from the settings `_stacks.export` left (uvicorn's factory)."""
    mcp = build(*_stacks.settings())
    return mcp.streamable_http_app(json_response=True, stateless_http=True, host="127.0.0.1")


def main() -> None:
    _stacks.serve_uvicorn("official_server", app, _stacks.arguments(__doc__.splitlines()[0]))


if __name__ == "__main__":
    main()
