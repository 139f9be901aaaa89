"""`mcpgen stubs` shares the model generation of `mcpgen openapi` and its mending
(mcpgen.stubs._mend, issue 26): a tool's schema with repeated enum values, enum members
named like str's methods and union variants inheriting their discriminator from an
`allOf` base gives a module that passes `ruff check --isolated` and `mypy --strict`
and decodes the tool's output as the schema says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpgen.stubs import ToolSpec, render
from tests.stubs.test_stubs import load
from tests.typecheck import shared_cache

_EVENT = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["opened", "closed"]},
        "id": {"type": "string"},
    },
    "required": ["kind", "id"],
}
OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event": {"$ref": "#/$defs/AnyEvent"},
        "sort": {"$ref": "#/$defs/Sort"},
        "level": {"type": "integer", "enum": [1, 2, 2, 3]},
    },
    "required": ["event"],
    "$defs": {
        "Event": _EVENT,
        "Opened": {
            "allOf": [
                {"$ref": "#/$defs/Event"},
                {"type": "object", "properties": {"by": {"type": "string"}}},
            ]
        },
        "Closed": {"allOf": [{"$ref": "#/$defs/Event"}]},
        "AnyEvent": {
            "oneOf": [{"$ref": "#/$defs/Opened"}, {"$ref": "#/$defs/Closed"}],
            "discriminator": {
                "propertyName": "kind",
                "mapping": {"opened": "#/$defs/Opened", "closed": "#/$defs/Closed"},
            },
        },
        "Sort": {"type": "string", "enum": ["title", "count", "", "title"]},
    },
}


# Every test here runs mypy over a generated module (seconds apiece): the whole suite's.
pytestmark = pytest.mark.slow


def test_stubs_module_of_the_mended_constructs_passes_and_decodes(tmp_path: Path) -> None:
    path = tmp_path / "mended_mod.py"
    path.write_text(render([ToolSpec("events", "", {"type": "object"}, OUTPUT)], {}, path))
    ruff = [sys.executable, "-m", "ruff", "check", "--isolated", "--output-format=concise"]
    checked = subprocess.run([*ruff, str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout
    mypy = [sys.executable, "-m", "mypy", "--strict", *shared_cache(tmp_path), str(path)]
    typed = subprocess.run(mypy, capture_output=True, text=True, check=False)
    assert typed.returncode == 0, typed.stdout
    module = load(path)
    try:
        wire = {"event": {"kind": "opened", "id": "1", "by": "ann"}, "sort": "title", "level": 2}
        out = msgspec.convert(wire, module.EventsOutput)
        assert isinstance(out.event, module.EventsOutputOpened) and out.event.by == "ann"
        assert out.sort is module.EventsOutputSort.title_ and out.sort == "title"
        assert [member.value for member in module.EventsOutputSort] == ["title", "count", ""]
        closed = msgspec.convert({"event": {"kind": "closed", "id": "2"}}, module.EventsOutput)
        assert isinstance(closed.event, module.EventsOutputClosed)
        assert msgspec.to_builtins(closed.event) == {"kind": "closed", "id": "2"}
    finally:
        sys.modules.pop(path.stem, None)
