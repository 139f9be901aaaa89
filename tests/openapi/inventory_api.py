"""A small inventory API in FastAPI, the upstream HTTP API of the OpenAPI tests: path,
query, header and body parameters, an enum, a nested model, an error response, an API
key, and a record of every request it saw (`SEEN`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from fastapi import Depends, FastAPI, Header, HTTPException, Query, Request, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field

API_KEY = "inventory-secret"
SEEN: list[dict[str, object]] = []

app = FastAPI(title="Inventory", version="1.2.0", servers=[{"url": "http://127.0.0.1:1"}])
key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


class Category(StrEnum):
    tools = "tools"
    garden = "garden"
    kitchen = "kitchen"


class Dimensions(BaseModel):
    width_cm: float
    height_cm: float


class ItemIn(BaseModel):
    name: str = Field(description="What the item is called")
    category: Category
    price: float = Field(gt=0)
    dimensions: Dimensions | None = None


class Item(ItemIn):
    id: int


class Page(BaseModel):
    items: list[Item]
    total: int


ITEMS: dict[int, Item] = {
    1: Item(id=1, name="anvil", category=Category.tools, price=99.5),
    2: Item(id=2, name="rake", category=Category.garden, price=12.0,
            dimensions=Dimensions(width_cm=40, height_cm=150)),
}  # fmt: skip


async def record(request: Request) -> None:
    SEEN.append(
        {
            "method": request.method,
            "path": request.url.path,
            "query": str(request.url.query),
            "key": request.headers.get("x-api-key"),
            "trace": request.headers.get("x-trace-id"),
            "body": (await request.body()).decode(),
        }
    )


def authorized(key: Annotated[str | None, Security(key_header)]) -> None:
    if key != API_KEY:
        raise HTTPException(status_code=401, detail="a valid X-API-Key is required")


Recorded = Depends(record)


@app.get("/items", operation_id="listItems", tags=["items"], dependencies=[Recorded])
def list_items(
    category: Category | None = None,
    limit: Annotated[int, Query(ge=1, le=100, description="At most this many")] = 10,
) -> Page:
    """List the items, optionally of one category."""
    found = [i for i in ITEMS.values() if category is None or i.category == category]
    return Page(items=found[:limit], total=len(found))


@app.get("/items/{item_id}", operation_id="getItem", tags=["items"], dependencies=[Recorded],
         responses={404: {"description": "No such item"}})  # fmt: skip
def get_item(item_id: int, x_trace_id: Annotated[str | None, Header()] = None) -> Item:
    """One item by its id."""
    if item_id not in ITEMS:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
    return ITEMS[item_id]


@app.post("/items", operation_id="createItem", tags=["admin"], status_code=201,
          dependencies=[Recorded, Depends(authorized)])  # fmt: skip
def create_item(item: ItemIn) -> Item:
    """Add an item (needs the API key)."""
    created = Item(id=max(ITEMS) + 1, **item.model_dump())
    ITEMS[created.id] = created
    return created


@app.delete("/items/{item_id}", operation_id="deleteItem", tags=["admin"], status_code=204,
            dependencies=[Recorded, Depends(authorized)])  # fmt: skip
def delete_item(item_id: int) -> None:
    """Remove an item (needs the API key)."""
    if ITEMS.pop(item_id, None) is None:
        raise HTTPException(status_code=404, detail=f"no item {item_id}")
