"""The workload on FastMCP 4.2.3 (its own venv: it pins its own SDK): stateless, JSON
responses, one uvicorn worker; the stack's clients opened in the lifespan and reached
through ``ctx.lifespan_context``.

    python bench/workload/servers/fastmcp_server.py --port 8203 --api URL --redis URL

With ``--workers N`` (N > 1) uvicorn's own workers serve the port (the way the
published benchmark runs its FastMCP server), each building the app with `app()`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from fastmcp import Context, FastMCP

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _stacks


def build(stack: str, api: str, redis_url: str) -> Any:
    lifespan = _stacks.lifespan(stack, api, redis_url, wrap=lambda opened: {"stack": opened})
    mcp: Any = FastMCP("workload", lifespan=lifespan)

    @mcp.tool(output_schema=None)
    async def search_products(
        ctx: Context, category: str, min_price: float, max_price: float, limit: int = 10
    ) -> str:
        """Products of a category within a price range, with the ten most popular."""
        tools = ctx.lifespan_context["stack"]
        return await tools.search_products(category, min_price, max_price, limit)

    @mcp.tool(output_schema=None)
    async def get_user_cart(ctx: Context, user_id: int) -> str:
        """A user's cart, its first product and the user's recent items."""
        return await ctx.lifespan_context["stack"].get_user_cart(user_id)

    @mcp.tool(output_schema=None)
    async def checkout(ctx: Context, user_id: int, items: list[dict[str, int]]) -> str:
        """Price a cart and record the order."""
        return await ctx.lifespan_context["stack"].checkout(user_id, items)

    return mcp


def app() -> Any:
    """The ASGI app, from the settings `_stacks.export` left (uvicorn's factory)."""
    return build(*_stacks.settings()).http_app(path="/mcp", json_response=True, stateless_http=True)


def main() -> None:
    _stacks.serve_uvicorn("fastmcp_server", app, _stacks.arguments(__doc__.splitlines()[0]))


if __name__ == "__main__":
    main()
