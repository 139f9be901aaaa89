"""Constructs of hand-written documents the model generator writes as code the checkers
refuse (issue 26, found in `@readme/oas-examples`), each in a tiny document: the module
`mcpgen openapi` writes passes `ruff check --isolated` and `mypy --strict` and decodes
what the document describes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from tests.openapi.generated import load_generated
from tests.typecheck import shared_cache

# Every test here runs mypy over a generated module (seconds apiece): the whole suite's.
pytestmark = pytest.mark.slow


def _document(schemas: dict[str, Any], body: str) -> dict[str, Any]:
    """One operation taking and answering `#/components/schemas/<body>`."""
    ref = {"$ref": f"#/components/schemas/{body}"}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Mend", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "putThing",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": ref}},
                    },
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": ref}},
                        }
                    },
                }
            }
        },
        "components": {"schemas": schemas},
    }


def _checked(tmp_path: Path, name: str, document: dict[str, Any]) -> tuple[str, ModuleType]:
    """The module generated from `document`, imported, after ruff and mypy passed it."""
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps(document))
    out = tmp_path / "out"
    out.mkdir()
    text, module = load_generated(spec, out / f"{name}.py")
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--output-format=concise", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *shared_cache(tmp_path), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout
    return text, module


def test_enum_values_repeated_are_one_member_each(tmp_path: Path) -> None:
    schemas = {
        "Level": {"type": "integer", "enum": [1, 2, 2, 3, 1]},
        "Mode": {"type": "string", "enum": ["", "fast", "", "fast", "slow"]},
        "Mixed": {"enum": ["", 0, 2, 2, 2.0, True]},
        # names given beside the values lose the repeat's name with it
        "Named": {"type": "string", "enum": ["a", "b", "a"], "x-enum-varnames": ["A", "B", "A2"]},
        "Settings": {
            "type": "object",
            "properties": {
                "level": {"$ref": "#/components/schemas/Level"},
                "mode": {"$ref": "#/components/schemas/Mode"},
                "mixed": {"$ref": "#/components/schemas/Mixed"},
                "named": {"$ref": "#/components/schemas/Named"},
            },
            "required": ["level", "mode"],
        },
    }
    _, module = _checked(tmp_path, "enums_mod", _document(schemas, "Settings"))
    assert [m.value for m in module.Level] == [1, 2, 3]
    assert [m.value for m in module.Mode] == ["", "fast", "slow"]
    # 2 and 2.0 are one JSON number; true is not the number 1
    assert [m.value for m in module.Mixed] == ["", 0, 2, True]
    assert list(module.Named.__members__) == ["A", "B"]
    got = msgspec.json.decode(b'{"level": 2, "mode": "slow", "mixed": 0}', type=module.Settings)
    assert (got.level, got.mode) == (module.Level(2), module.Mode.slow)
    assert got.mixed == 0  # an Enum of mixed values msgspec decodes as Any


def test_enum_members_named_like_attributes_keep_their_values(tmp_path: Path) -> None:
    words = ["title", "name", "value", "count", "upper", "index", "mro", "title_", "plain"]
    schemas = {
        "Field": {"type": "string", "enum": words},
        "Query": {
            "type": "object",
            "properties": {
                "sort": {"$ref": "#/components/schemas/Field"},
                "order": {"type": "string", "enum": ["count", "index"], "default": "count"},
            },
        },
    }
    text, module = _checked(tmp_path, "members_mod", _document(schemas, "Query"))
    members = module.Field.__members__
    assert [m.value for m in module.Field] == words  # every value, in order, none lost
    assert members["title__"].value == "title"  # `title_` was taken by a value of its own
    assert members["title_"].value == "title_"
    assert members["plain"].value == "plain"  # what clashes with nothing keeps its name
    for clashing in ("name", "value", "count", "upper", "index", "mro"):
        assert members[clashing + "_"].value == clashing
    assert "= Order.count_" in text  # the default names the renamed member
    got = msgspec.json.decode(b'{"sort": "title"}', type=module.Query)
    assert got.sort is members["title__"] and got.order == "count"
    assert msgspec.json.decode(msgspec.json.encode(got)) == {"sort": "title", "order": "count"}


def _extends(base: str, **properties: Any) -> dict[str, Any]:
    return {
        "allOf": [
            {"$ref": f"#/components/schemas/{base}"},
            {"type": "object", "properties": properties},
        ]
    }


def test_variants_inheriting_their_discriminator_decode_by_tag(tmp_path: Path) -> None:
    """The webhook pattern: the tag property is declared once, on a base every variant
    extends (two levels deep here), and narrowed only by the union's mapping."""
    schemas = {
        "Event": {
            "type": "object",
            "properties": {
                "event_type": {"type": "string", "enum": ["approved", "denied"]},
                "id": {"type": "string"},
            },
            "required": ["event_type", "id"],
        },
        "BuyerEvent": _extends("Event", buyer={"type": "string"}),
        "Approved": _extends("BuyerEvent", amount={"type": "integer"}),
        "Denied": {"allOf": [{"$ref": "#/components/schemas/Event"}]},
        "AnyEvent": {
            "oneOf": [
                {"$ref": "#/components/schemas/Approved"},
                {"$ref": "#/components/schemas/Denied"},
            ],
            "discriminator": {
                "propertyName": "event_type",
                "mapping": {
                    "approved": "#/components/schemas/Approved",
                    "denied": "Denied",  # OpenAPI lets a mapping name the schema alone
                },
            },
        },
    }
    text, module = _checked(tmp_path, "events_mod", _document(schemas, "AnyEvent"))
    assert "body: AnyEvent" in text and "Untyped" not in text
    approved = msgspec.json.decode(
        b'{"event_type": "approved", "id": "1", "buyer": "b", "amount": 5}', type=module.AnyEvent
    )
    assert isinstance(approved, module.Approved)
    assert (approved.id, approved.buyer, approved.amount) == ("1", "b", 5)
    denied = msgspec.json.decode(b'{"event_type": "denied", "id": "2"}', type=module.AnyEvent)
    assert isinstance(denied, module.Denied) and denied.id == "2"
    assert msgspec.json.decode(msgspec.json.encode(denied)) == {"event_type": "denied", "id": "2"}
    # The base itself, used alone, still carries the property as a field.
    event = msgspec.json.decode(b'{"event_type": "denied", "id": "3"}', type=module.Event)
    assert event.event_type == "denied"
