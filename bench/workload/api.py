"""The HTTP API stand-in the workload's tools call: 100,000 generated products.

    python bench/workload/api.py --port 8100 [--products 100000]

A bare ASGI app (no framework, msgspec for JSON) under one uvicorn worker, so its cost,
which every server under test shares, stays small:

- ``GET /products/search?category=C&min_price=A&max_price=B&limit=N``: products of one
  category within a price range, cheapest first (a bisect over a per-category price
  index);
- ``GET /products/<id>``: one product, 404 when unknown;
- ``POST /cart/calculate`` with ``{"items": [{"product_id": 1, "quantity": 2}, ...]}``:
  the lines priced, a subtotal, tax and the total.
"""

from __future__ import annotations

import argparse
import bisect
import random
from typing import Any
from urllib.parse import parse_qsl

import msgspec

CATEGORIES = (
    "books", "music", "games", "garden", "kitchen", "sports", "toys", "tools",
    "audio", "video", "office", "pets", "beauty", "health", "auto", "baby",
    "shoes", "bags", "watches", "lights",
)  # fmt: skip
TAX_RATE = 0.2


class Product(msgspec.Struct):
    id: int
    name: str
    category: str
    price: float
    stock: int


def products(count: int, seed: int = 28) -> list[Product]:
    """The catalogue: the same ``count`` products for the same seed (ids 1..count)."""
    rng = random.Random(seed)
    return [
        Product(
            id=i,
            name=f"product-{i}",
            category=CATEGORIES[i % len(CATEGORIES)],
            price=round(rng.uniform(1.0, 1000.0), 2),
            stock=rng.randrange(0, 500),
        )
        for i in range(1, count + 1)
    ]


class Item(msgspec.Struct):
    product_id: int
    quantity: int = 1


class Cart(msgspec.Struct):
    items: list[Item]


def build_app(count: int) -> Any:
    catalogue = products(count)
    by_id = {p.id: p for p in catalogue}
    index: dict[str, tuple[list[float], list[Product]]] = {}
    for category in CATEGORIES:
        rows = sorted((p for p in catalogue if p.category == category), key=lambda p: p.price)
        index[category] = ([p.price for p in rows], rows)
    encode = msgspec.json.Encoder().encode
    decode_cart = msgspec.json.Decoder(Cart).decode
    json_headers = [(b"content-type", b"application/json")]

    def search(query: bytes) -> tuple[int, Any]:
        args = dict(parse_qsl(query.decode()))
        prices, rows = index.get(args.get("category", ""), ([], []))
        low = bisect.bisect_left(prices, float(args.get("min_price", 0)))
        high = bisect.bisect_right(prices, float(args.get("max_price", 1e12)))
        limit = max(0, min(int(args.get("limit", 10)), 100))
        found = rows[low : min(high, low + limit)]
        return 200, {"total": high - low if high > low else 0, "products": found}

    def calculate(body: bytes) -> tuple[int, Any]:
        try:
            cart = decode_cart(body)
        except msgspec.ValidationError as exc:
            return 400, {"error": str(exc)}
        lines = []
        subtotal = 0.0
        for item in cart.items:
            product = by_id.get(item.product_id)
            if product is None:
                return 404, {"error": f"unknown product {item.product_id}"}
            line = round(product.price * item.quantity, 2)
            subtotal += line
            lines.append({"product_id": product.id, "quantity": item.quantity, "total": line})
        tax = round(subtotal * TAX_RATE, 2)
        return 200, {
            "lines": lines,
            "subtotal": round(subtotal, 2),
            "tax": tax,
            "total": round(subtotal + tax, 2),
        }

    def route(method: str, path: str, query: bytes, body: bytes) -> tuple[int, Any]:
        if method == "GET" and path == "/products/search":
            return search(query)
        if method == "GET" and path.startswith("/products/"):
            tail = path[len("/products/") :]
            product = by_id.get(int(tail)) if tail.isdigit() else None
            return (200, product) if product is not None else (404, {"error": "not found"})
        if method == "POST" and path == "/cart/calculate":
            return calculate(body)
        return 404, {"error": "no route"}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            status, payload = route(scope["method"], scope["path"], scope["query_string"], body)
        except ValueError as exc:
            status, payload = 400, {"error": str(exc)}
        await send({"type": "http.response.start", "status": status, "headers": json_headers})
        await send({"type": "http.response.body", "body": encode(payload)})

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--products", type=int, default=100_000)
    args = parser.parse_args()
    import uvicorn  # noqa: PLC0415

    uvicorn.run(
        build_app(args.products),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        backlog=2048,
    )


if __name__ == "__main__":
    main()
