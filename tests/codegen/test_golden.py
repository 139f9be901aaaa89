"""Golden cases: small hand-written schemas with their expected generated module.

Each folder under cases/ holds `schema.json`, an optional `policy.toml` and
`expected.py`. Set MCPGEN_UPDATE_GOLDEN=1 to rewrite the expected files after an
intended generator change (then review the diff). Besides the text, each expected
module is imported and exercised, so a golden file can never enshrine broken code.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import json
import os
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from mcpgen_codegen.config import GenerationError, Pin, policy_from_dict
from mcpgen_codegen.pipeline import build_module
from mcpgen_codegen.render import format_source, render_module

CASES = Path(__file__).parent / "cases"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "schema.json").is_file())


def render_case(name: str) -> str:
    folder = CASES / name
    raw = (folder / "schema.json").read_bytes()
    policy_file = folder / "policy.toml"
    policy = policy_from_dict(
        tomllib.loads(policy_file.read_text()) if policy_file.is_file() else {}
    )
    pin = Pin(
        version=f"case-{name}",
        repo="example/cases",
        commit="0" * 40,
        path=f"{name}/schema.json",
        local=f"{name}/schema.json",
        sha256=hashlib.sha256(raw).hexdigest(),
        role="modern",
        module=name,
        spec_url="https://example.invalid/spec",
        doc_url="https://example.invalid/spec#{anchor}",
    )
    ir = build_module(json.loads(raw), pin, (), policy)
    return format_source({f"{name}.py": render_module(ir)})[f"{name}.py"]


def load_expected(name: str) -> ModuleType:
    path = CASES / name / "expected.py"
    spec = importlib.util.spec_from_file_location(f"golden_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # msgspec resolves annotations through the module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", NAMES)
def test_golden_text(name: str) -> None:
    actual = render_case(name)
    expected_file = CASES / name / "expected.py"
    if os.environ.get("MCPGEN_UPDATE_GOLDEN") == "1":
        expected_file.write_text(actual)
    expected = expected_file.read_text()
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), "expected", "actual"
            )
        )
        pytest.fail(f"generated code for case {name!r} changed:\n{diff}")


@pytest.mark.parametrize("name", NAMES)
def test_golden_module_decodes(name: str) -> None:
    module = load_expected(name)
    types = [
        n
        for n in module.__all__
        if n[0].isupper() and not n.isupper() and n not in module.CONTEXT_DEPENDENT
    ]
    assert types
    for type_name in types:
        msgspec.json.Decoder(getattr(module, type_name))


def roundtrip(t: Any, doc: Any) -> Any:
    obj = msgspec.json.decode(json.dumps(doc).encode(), type=t)
    return obj, json.loads(msgspec.json.encode(obj))


def test_tagged_union_behaviour() -> None:
    m = load_expected("tagged_union")
    assert m.Circle.__struct_config__.tag_field == "kind"
    obj, back = roundtrip(
        m.Drawing, {"shapes": [{"kind": "square", "side": 2}, {"kind": "circle", "radius": 1.5}]}
    )
    assert [type(s).__name__ for s in obj.shapes] == ["Square", "Circle"]
    assert back["shapes"][1] == {"kind": "circle", "radius": 1.5}
    _, back = roundtrip(m.Drawing, {"shapes": [], "focus": "nothing"})
    assert back["focus"] == "nothing"
    with pytest.raises(msgspec.ValidationError):
        roundtrip(m.Shape, {"kind": "triangle"})


def test_merged_union_behaviour() -> None:
    m = load_expected("merged_union")
    doc = {"body": {"uri": "a", "blob": "AA=="}, "attachments": [{"uri": "b", "text": "t"}]}
    obj, back = roundtrip(m.Message, doc)
    assert type(obj.body).__name__ == "AnyBody" and back == doc
    _, back = roundtrip(m.Params, {"mode": "url", "url": "https://x"})
    assert back == {"mode": "url", "url": "https://x"}
    assert not any(n.startswith("ParamsVariant") for n in m.__all__)  # merged away
    assert "Context" in m.CONTEXT_DEPENDENT
    with pytest.raises(TypeError):
        msgspec.json.Decoder(m.Context)  # documentation only: really not decodable


def test_open_object_keeps_every_key() -> None:
    m = load_expected("open_object")
    doc = {
        "_meta": {"traceId": "t", "vendor.example/x": [1, None]},
        "name": "n",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "additionalProperties": False,
        },
        "arguments": {"k": {"deep": 1.5}},
        "counts": {"a": 1},
        "anything": None,
    }
    _, back = roundtrip(m.Tool, doc)
    assert back == doc
    _, back = roundtrip(m.Closed, {})
    assert back == {}


def test_recursive_alias_behaviour() -> None:
    m = load_expected("recursive_alias")
    doc = {
        "label": "root",
        "children": [{"label": "leaf", "data": {"x": [1, 2.5, None, {"y": True}]}}],
    }
    _, back = roundtrip(m.Tree, doc)
    assert back == doc


def test_const_default_behaviour() -> None:
    m = load_expected("const_default")
    obj, back = roundtrip(m.Envelope, {"ttl": None})
    assert back == {
        "jsonrpc": "2.0",
        "resultType": "complete",
        "ttl": None,
    }  # constants always written
    assert obj.mode is msgspec.UNSET  # an optional constant is not invented
    with pytest.raises(msgspec.ValidationError):
        roundtrip(m.Envelope, {"jsonrpc": "1.0", "ttl": 1})
    with pytest.raises(msgspec.ValidationError):
        roundtrip(m.Envelope, {})  # nullable but required


def test_keyword_names_behaviour() -> None:
    m = load_expected("keyword_names")
    doc = {
        "from": "a",
        "class": 1,
        "type": "t",
        "$schema": "s",
        "mimeType": "m",
        "URLPath": "/",
        "io.example/traceId": "x",
        "2fa": True,
        "meta": "plain",
        "_meta": "under",
    }
    obj, back = roundtrip(m.Odd, doc)
    assert back == doc
    assert (obj.from_, obj.class_, obj.url_path, obj.trace_id, obj.n_2fa) == (
        "a",
        1,
        "/",
        "x",
        True,
    )
    assert {obj.meta, obj.meta_} == {"plain", "under"}


def test_inline_hoisting_behaviour() -> None:
    m = load_expected("inline_hoisting")
    assert m.Request.__annotations__["params"] == "RequestParams"
    assert m.Other.__annotations__["params"] == "OtherParams | UnsetType"  # equal shape, own name
    assert (
        m.Request.__annotations__["where"] == "RequestWhere | UnsetType"
    )  # not a Point by accident
    assert {"PickPoint", "PickNone"} <= set(m.__all__)  # inline variants named by their tag
    obj, back = roundtrip(m.Pick, {"status": "point", "x": 1, "y": 2})
    assert type(obj).__name__ == "PickPoint" and back == {"status": "point", "x": 1, "y": 2}
    # A variant equal to a named definition reuses it; a merged-away variant leaves no class.
    either, back = roundtrip(m.Either, {"x": 1, "y": 2})
    assert back == {"x": 1, "y": 2} and either.status is msgspec.UNSET  # optional: not invented
    assert not any(n.startswith("EitherVariant") for n in m.__all__)


def test_allof_flattening_behaviour() -> None:
    m = load_expected("allof_flattening")
    _, back = roundtrip(m.Task, {"id": "1", "ttl": 5})
    assert back == {"id": "1", "ttl": 5, "resultType": "task"}
    _, back = roundtrip(m.Status, {"id": "2", "status": "input_required", "asks": ["q"]})
    assert back == {"id": "2", "status": "input_required", "asks": ["q"]}
    with pytest.raises(msgspec.ValidationError):
        roundtrip(m.Task, {"id": "1", "ttl": 5, "resultType": "complete"})


def test_draft07_definitions_behaviour() -> None:
    m = load_expected("draft07_definitions")
    assert set(m.METHODS) == {"ping", "notifications/note"}
    ping = m.METHODS["ping"]
    assert (ping.kind, ping.direction, ping.result) == ("request", "client_to_server", m.Result)
    assert m.METHODS["notifications/note"].params is m.NoteNotificationParams
    assert m.ERROR_CODES == {"OOPS_ERROR": -32050, "PARSE_ERROR": -32700}
    assert frozenset() == m.META_KEYS
    _, back = roundtrip(m.PingRequest, {"jsonrpc": "2.0", "id": 7, "method": "ping"})
    assert back == {"jsonrpc": "2.0", "id": 7, "method": "ping"}


def test_unresolvable_union_names_the_policy_entry() -> None:
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "string"}}},
            "B": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "U": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]},
        }
    }
    pin = Pin(
        version="x",
        repo="r",
        commit="c",
        path="p",
        local="l",
        sha256="s",
        role="modern",
        module="x",
        spec_url="u",
    )
    with pytest.raises(GenerationError, match=r"add 'U' to \[unions\].documentation_only"):
        build_module(schema, pin, (), policy_from_dict({}))
