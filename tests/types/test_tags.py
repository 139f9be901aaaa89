"""A tagged struct exposes its tag as a read-only attribute (issue 11, item 10):
`block.type == "image"`, `request.method == "tools/call"`, as the official SDK's types do.
msgspec keeps the tag in the class's config, not in a field, so the generator emits a
property: nothing per instance, never encoded a second time, typed as the tag's Literal."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
import pytest

import mcpgen_types

REPO = Path(__file__).resolve().parents[2]
MODULES = {v: importlib.import_module(m) for v, m in mcpgen_types.MODULES.items()}


def tagged(module: ModuleType) -> list[type[msgspec.Struct]]:
    """The tagged structs a module defines (not those it imports from its core)."""
    return [
        cls
        for cls in vars(module).values()
        if isinstance(cls, type)
        and issubclass(cls, msgspec.Struct)
        and cls.__module__ == module.__name__
        and cls.__struct_config__.tag_field is not None
    ]


def sample(tp: Any) -> Any:
    """Some JSON value of type `tp` (the shape only, not a meaningful value)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        hints = msgspec.structs.fields(tp)
        out = {f.encode_name: sample(f.type) for f in hints if f.required}
        config = tp.__struct_config__
        if config.tag_field is not None:
            out[config.tag_field] = config.tag
        return out
    origin, args = get_origin(tp), get_args(tp)
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        return sample(next(a for a in args if a is not msgspec.UnsetType))
    if origin is list:
        return []
    if origin is dict or tp is dict:
        return {}
    return {str: "", int: 0, float: 0.0, bool: False, type(None): None}.get(tp)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


@pytest.mark.parametrize("version", sorted(MODULES))
def test_every_tagged_struct_exposes_its_tag(version: str) -> None:
    structs = tagged(MODULES[version])
    # the Apps extension's content blocks are the core's: one tagged struct of its own
    assert len(structs) >= (1 if version == "ext-apps" else 10)
    for cls in structs:
        config = cls.__struct_config__
        attr = config.tag_field
        assert attr is not None and attr.isidentifier()
        assert isinstance(vars(cls)[attr], property), cls
        value = msgspec.convert(sample(cls), cls)
        assert getattr(value, attr) == config.tag, cls
        with pytest.raises(AttributeError):
            setattr(value, attr, "other")
        # One tag key on the wire: the property is not a field.
        encoded = msgspec.json.encode(value)
        decoded = json.loads(encoded, object_pairs_hook=_no_duplicate_keys)
        assert decoded[attr] == config.tag
        assert attr not in {f.name for f in msgspec.structs.fields(cls)}


@pytest.mark.parametrize("version", sorted(MODULES))
def test_text_content_type(version: str) -> None:
    module = MODULES[version]
    if not hasattr(module, "TextContent"):
        pytest.fail(f"{version} has no TextContent")
    block = module.TextContent(text="x")
    assert block.type == "text"
    assert msgspec.json.encode(block) == b'{"type":"text","text":"x"}'
    assert msgspec.json.decode(b'{"type":"text","text":"x"}', type=module.TextContent) == block


def test_content_blocks_and_requests_read_like_the_official_types() -> None:
    t = MODULES["2026-07-28"]
    blocks = msgspec.json.decode(
        b'[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"a"}]',
        type=list[t.ContentBlock],
    )
    assert [b.type for b in blocks] == ["image", "text"]
    request = t.CallToolRequest(id=1, params=t.CallToolRequestParams(name="x", meta={}))
    assert request.method == "tools/call"
    task = MODULES["ext-tasks"].WorkingTask
    assert task.__struct_config__.tag == "working"


CHECKS = """\
from mcpgen_types import latest as t

block = t.TextContent(text="x")
reveal_type(block.type)  # R: Literal['text']
reveal_type(t.ImageContent(data="", mime_type="image/png").type)  # R: Literal['image']
call = t.CallToolRequest(id=1, params=t.CallToolRequestParams(name="x", meta={}))
reveal_type(call.method)  # R: Literal['tools/call']


def kind(item: t.ContentBlock) -> None:
    if item.type == "image":
        reveal_type(item)  # R: mcpgen_types.v2026_07_28.ImageContent

block.type = "text"  # E: misc
"""


@pytest.mark.slow
def test_mypy_sees_the_tag_as_a_literal(tmp_path: Path) -> None:
    (tmp_path / "tags.py").write_text(CHECKS)
    expected = set()
    for at, line in enumerate(CHECKS.splitlines(), 1):
        if "  # R: " in line:
            expected.add((at, f'note: Revealed type is "{line.rsplit("  # R: ", 1)[1]}"'))
        elif "  # E: " in line:
            expected.add((at, f"error [{line.rsplit('  # E: ', 1)[1]}]"))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "--hide-error-context", "--no-pretty", "--cache-dir", str(tmp_path / "cache"), "tags.py"],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(REPO / "generated")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert proc.stderr == "", proc.stderr
    found = set()
    for line in proc.stdout.splitlines():
        where, kind, message = line.split(": ", 2)
        number = int(where.rsplit(":", 1)[1])
        if kind == "error":
            found.add((number, f"error [{message.rsplit('[', 1)[1].rstrip(']')}]"))
        elif message.startswith("Revealed type"):
            found.add((number, f"note: {message}"))
    assert found == expected, proc.stdout
