"""A server whose tool schemas exercise the stub generator: nested objects, enums, arrays,
oneOf/anyOf, $ref/$defs (two tools defining a `Point` of different shapes), formats,
output schemas, names that are no Python identifiers, and two tools whose names clash once
snake_cased. `STUBS_EXTRA_TOOL=1` adds one tool (the drift `--check` must notice).

Run over stdio: `python tests/stubs/schema_server.py`.
"""

from __future__ import annotations

import os
from typing import Any

from mcpgen import Server, ToolError

server = Server("stubs-schemas", version="2.1.0")

TRIP_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "traveller": {"$ref": "#/$defs/Person"},
        "mode": {"enum": ["train", "plane", "boat"], "description": "How to travel."},
        "dates": {"type": "array", "items": {"type": "string", "format": "date-time"}},
        "homepage": {"type": "string", "format": "uri"},
        "budget": {"anyOf": [{"type": "number", "minimum": 0}, {"type": "string"}]},
        "seat": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"kind": {"const": "window"}, "row": {"type": "integer"}},
                    "required": ["kind", "row"],
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "aisle"}, "side": {"enum": ["left", "right"]}},
                    "required": ["kind", "side"],
                },
            ]
        },
        "class": {"type": "string", "description": "A Python keyword as a property."},
        "stops": {"type": "integer", "default": 0},
    },
    "required": ["traveller", "mode", "dates"],
    "$defs": {
        "Person": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "home": {"$ref": "#/$defs/Point"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["name"],
        },
        "Point": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        },
    },
}

TRIP_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "departs": {"type": "string", "format": "date-time"},
        "link": {"type": "string", "format": "uri"},
        "mode": {"enum": ["train", "plane", "boat"]},
        "legs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"start": {"$ref": "#/$defs/Point"}, "hours": {"type": "number"}},
                "required": ["start", "hours"],
            },
        },
        "note": {"type": ["string", "null"]},
    },
    "required": ["id", "departs", "mode", "legs"],
    "$defs": {
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
            "required": ["x", "y"],
        }
    },
}


@server.tool(
    name="plan_trip",
    description="Plans a trip for one traveller.",
    input_schema=TRIP_INPUT,
    output_schema=TRIP_OUTPUT,
)
def plan_trip(**arguments: Any) -> dict[str, Any]:
    home = arguments["traveller"].get("home") or {"lat": 0, "lon": 0}
    return {
        "id": f"{arguments['traveller']['name']}:{arguments['mode']}:{arguments.get('class', '-')}",
        "departs": arguments["dates"][0],
        "link": "https://example.com/trips/1",
        "mode": arguments["mode"],
        "legs": [
            {"start": {"x": round(home["lat"]), "y": round(home["lon"])}, "hours": 1.5},
            {"start": {"x": 0, "y": 0}, "hours": float(arguments.get("stops", 0))},
        ],
        "note": f"seat {arguments['seat']['kind']}" if "seat" in arguments else None,
    }


@server.tool(
    name="planTrip",
    description='The same name once snake_cased; a description with "quotes" and \\ in it.',
    input_schema={"type": "object"},
)
def plan_trip_again() -> str:
    return "again"


@server.tool(name="get-user.info", input_schema={"type": "object", "properties": {}})
def user_info() -> str:
    return "someone"


@server.tool(
    name="import",
    description="A tool named like a Python keyword, taking a property named `self`.",
    input_schema={
        "type": "object",
        "properties": {"self": {"type": "boolean"}, "count": {"type": "integer"}},
        "required": ["self"],
    },
    output_schema={
        "type": "object",
        "properties": {"seen": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "required": ["seen"],
    },
)
def import_(**arguments: Any) -> dict[str, Any]:
    return {"seen": {key: int(value) for key, value in arguments.items()}}


@server.tool(name="fail", description="Always fails.", input_schema={"type": "object"})
def fail() -> str:
    raise ToolError("no luck today")  # the error result says exactly this


if os.environ.get("STUBS_EXTRA_TOOL") == "1":

    @server.tool(name="added_later", input_schema={"type": "object"})
    def added_later() -> str:
        return "new"


if __name__ == "__main__":
    server.run()
