"""An MCP App: a tool whose results a host shows as a sortable table, and an app-only
tool the table calls back through the host to reprice a row.

Run it: `python examples/apps/server.py --http --port 8000` (Streamable HTTP at /mcp), or
over stdio without arguments. The app's HTML (`table.html`, beside this file) is plain and
self-contained: it talks to its host over `postMessage` (JSON-RPC, the `ui/*` methods of
the MCP Apps extension) and loads nothing from the network.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from mcpgen import Context, Server
from mcpgen_types.ext_apps import McpUiResourceCsp, McpUiResourceMeta, McpUiToolMeta

TABLE = "ui://inventory/table.html"

server = Server("inventory", "1.0", description="Products with an interactive table")
server.add_app_resource(
    TABLE,
    Path(__file__).with_name("table.html"),
    title="Inventory table",
    ui=McpUiResourceMeta(csp=McpUiResourceCsp(connect_domains=[]), prefers_border=True),
)


class Product(msgspec.Struct):
    sku: str
    name: str
    price: float
    stock: int


class Inventory(msgspec.Struct):
    products: list[Product]


PRODUCTS = [
    Product("A-100", "anvil", 99.5, 3),
    Product("B-200", "bucket", 4.25, 120),
    Product("C-300", "crowbar", 18.0, 40),
]


@server.tool(app=TABLE)
def list_products(ctx: Context, max_price: float | None = None) -> Inventory:
    """The products (at most `max_price`), shown as a sortable table by hosts with apps."""
    found = [p for p in PRODUCTS if max_price is None or p.price <= max_price]
    return Inventory(found)


@server.tool(app=McpUiToolMeta(resource_uri=TABLE, visibility=["app"]))
def reprice(sku: str, percent: float) -> Product:
    """Change a product's price by `percent` (called by the table, not by the model)."""
    for index, product in enumerate(PRODUCTS):
        if product.sku == sku:
            PRODUCTS[index] = msgspec.structs.replace(
                product, price=round(product.price * (1 + percent / 100), 2)
            )
            return PRODUCTS[index]
    raise ValueError(f"no product {sku!r}")


@server.tool
def describe_view(ctx: Context) -> str:
    """Says whether this client renders apps (hosts without them get text only)."""
    if ctx.ui is None:
        return "this client shows text only"
    return "this client renders apps: " + ", ".join(ctx.ui.mime_types or [])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.http:
        server.run(transport="http", host="127.0.0.1", port=args.port)
    else:
        server.run()
