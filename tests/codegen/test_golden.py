"""Golden cases: small hand-written schemas with their expected generated module.

Each folder under cases/ holds `schema.json`, an optional `policy.toml` and
`expected.py`. Set MCPGEN_UPDATE_GOLDEN=1 to rewrite the expected files after an
intended generator change (then review the diff). Besides the text, each expected
module is imported and exercised, so a golden file can never enshrine broken code.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from mcpgen_codegen.config import GenerationError, Pin, Policy, policy_from_dict
from mcpgen_codegen.hoist import hoist_local_definitions
from mcpgen_codegen.ir import ModuleIR
from mcpgen_codegen.pipeline import build_module
from mcpgen_codegen.render import format_source, render_module

CASES = Path(__file__).parent / "cases"
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "schema.json").is_file())


def _pin(name: str, raw: bytes, module: str, **extra: Any) -> Pin:
    return Pin(
        version=f"case-{module}",
        repo="example/cases",
        commit="0" * 40,
        path=f"{name}/schema.json",
        local=f"{name}/schema.json",
        sha256=hashlib.sha256(raw).hexdigest(),
        role=extra.pop("role", "modern"),
        module=module,
        spec_url="https://example.invalid/spec",
        doc_url="https://example.invalid/spec#{anchor}",
        **extra,
    )


def _policy(folder: Path) -> Policy:
    policy_file = folder / "policy.toml"
    return policy_from_dict(tomllib.loads(policy_file.read_text()) if policy_file.is_file() else {})


def _core_ir(name: str) -> ModuleIR | None:
    """A case with `core.json` is an extension of that core (module `<name>_core`)."""
    core_file = CASES / name / "core.json"
    if not core_file.is_file():
        return None
    raw = core_file.read_bytes()
    pin = _pin(name, raw, f"{name}_core")
    return build_module(json.loads(raw), pin, (), _policy(CASES / name))


def render_case(name: str) -> str:
    folder = CASES / name
    raw = (folder / "schema.json").read_bytes()
    core = _core_ir(name)
    extra: dict[str, Any] = {}
    if core is not None:
        extra = {"role": "extension", "extends": core.version, "extension_id": "example/ext"}
    pin = _pin(name, raw, name, **extra)
    ir = build_module(json.loads(raw), pin, (), _policy(folder), core)
    return format_source({f"{name}.py": render_module(ir)})[f"{name}.py"]


def load_expected(name: str) -> ModuleType:
    core = _core_ir(name)
    if core is not None:  # the extension imports its core as mcpgen_types.<name>_core
        _load(f"mcpgen_types.{core.module}", render_module(core))
    return _load(f"golden_{name}", (CASES / name / "expected.py").read_text())


def _load(module_name: str, source: str) -> ModuleType:
    module = ModuleType(module_name)
    sys.modules[module_name] = module  # msgspec resolves annotations through the module
    exec(compile(source, f"<{module_name}>", "exec"), module.__dict__)
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
    # The tag reads as a property (msgspec keeps it in the config, not in a field).
    square = m.Square(side=2)
    assert (square.kind, obj.shapes[1].kind) == ("square", "circle")
    assert msgspec.json.encode(square) == b'{"kind":"square","side":2}'
    assert "kind" not in m.Square.__struct_fields__
    with pytest.raises(AttributeError):
        square.kind = "circle"


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


def test_lenient_params_behaviour() -> None:
    m = load_expected("lenient_params")
    # One variant per params type (list and count share one); none for `ask`, whose
    # `_meta` is optional already, nor for the notification.
    expected = {
        "fetch": m.FetchRequestParamsLenient,
        "list": m.RequestParamsLenient,
        "count": m.RequestParamsLenient,
    }
    table = m.LENIENT_PARAMS
    assert table == expected
    obj, back = roundtrip(m.FetchRequestParamsLenient, {"url": "u"})
    assert isinstance(obj, m.FetchRequestParams) and obj.meta == {}
    assert back == {"_meta": {}, "url": "u"}
    obj, _ = roundtrip(m.RequestParamsLenient, {"_meta": {"k": 1}})
    assert obj.meta == {"k": 1}
    with pytest.raises(msgspec.ValidationError, match="_meta"):
        roundtrip(m.FetchRequestParams, {"url": "u"})  # the modern type stays strict


def test_extension_keys_behaviour() -> None:
    m = load_expected("extension_keys")
    core = sys.modules["mcpgen_types.extension_keys_core"]
    assert m.CORE_EXTENDED == ("Filter", "WatchRequest", "WatchRequestParams")
    assert m.Label is core.Label and m.WatchResult is core.WatchResult  # still shared
    assert not hasattr(m, "Unrelated")  # holds nothing extended: stays in the core
    doc = {
        "id": 1,
        "method": "watch",
        "params": {"filter": {"toolsChanged": True, "jobIds": ["a"]}},
    }
    obj, back = roundtrip(m.METHODS["watch"].message, doc)
    assert obj.params.filter.job_ids == ["a"] and back == doc
    _, back = roundtrip(core.WatchRequest, doc)
    assert back["params"]["filter"] == {"toolsChanged": True}  # the core stays as pinned


def _extension_error(policy: dict[str, Any], ext_defs: dict[str, Any]) -> str:
    core_schema = json.loads((CASES / "extension_keys" / "core.json").read_text())
    base = {"methods": {"direction_unions": {"ClientRequest": "client_to_server"}}}
    core = build_module(core_schema, _pin("x", b"", "core"), (), policy_from_dict(base))
    pin = _pin("x", b"", "ext", role="extension", extends=core.version)
    with pytest.raises(GenerationError) as info:
        build_module({"$defs": ext_defs}, pin, (), policy_from_dict({**base, **policy}), core)
    return str(info.value)


def test_extension_keys_errors_name_the_policy_entry() -> None:
    job = {"type": "object", "properties": {"jobIds": {"type": "array"}}}
    bad = {"type": "object", "properties": {"toolsChanged": {"type": "string"}}}
    entry = "[extensions.case-ext.extend]"

    def extend(target: str, *sources: str) -> dict[str, Any]:
        return {"extensions": {"case-ext": {"extend": {target: list(sources)}}}}

    assert entry in _extension_error(extend("Nothing", "Job"), {"Job": job})
    assert "Missing is not a struct" in _extension_error(extend("Filter", "Missing"), {"Job": job})
    assert "disagrees" in _extension_error(extend("Filter", "Bad"), {"Bad": bad})
    # The extension defines a struct that holds the extended one: ambiguous, refused.
    params = {"type": "object", "properties": {"x": {"type": "string"}}}
    message = _extension_error(extend("Filter", "Job"), {"Job": job, "WatchRequestParams": params})
    assert "defines its own WatchRequestParams" in message


def test_lenient_keys_must_be_objects() -> None:
    schema = json.loads((CASES / "lenient_params" / "schema.json").read_text())
    schema["$defs"]["FetchRequestParams"]["allOf"][1]["properties"]["url"] = {"type": "string"}
    policy = tomllib.loads((CASES / "lenient_params" / "policy.toml").read_text())
    policy["lenient"]["keys"] = ["_meta", "url"]
    with pytest.raises(GenerationError, match=r"FetchRequestParams.url: \[lenient\].keys"):
        build_module(schema, _pin("x", b"", "x"), (), policy_from_dict(policy))


def test_inlined_extension_behaviour() -> None:
    """A schema that inlines every reference (as the MCP Apps one does) still yields one
    class per thing: copies of the core's blocks are the core's classes, both inline
    sizes are `UiSize`, the private recursive value is the core's `Value`."""
    m = load_expected("inlined_extension")
    core = sys.modules["mcpgen_types.inlined_extension_core"]
    assert m.TextBlock is core.TextBlock and m.ImageBlock is core.ImageBlock
    assert m.Value is core.Value
    assert not hasattr(m, "CORE_DIVERGENCES")  # no copy of a core definition differs
    params = m.UiShowRequestParams.__annotations__
    assert params["size"] == "UiSize | UnsetType"
    assert m.UiShowRequestParamsBlocksItemVariant3.__annotations__["size"] == "UiSize | UnsetType"
    assert "legacy" not in {f.name for f in msgspec.structs.fields(m.UiShowRequestParams)}
    wire = {
        "method": "ui/show",
        "params": {
            "blocks": [
                {"type": "text", "text": "hi", "note": {"audience": ["user"]}},
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
                {"type": "video", "uri": "v://1", "size": {"width": 1, "height": 2.5}},
            ],
            "state": {"a": [1, "x", {"b": 2}]},
        },
    }
    obj, back = roundtrip(m.UiShowRequest, wire)
    assert back == wire
    assert isinstance(obj.params.blocks[0], core.TextBlock)
    show, hidden = m.METHODS["ui/show"], m.METHODS["ui/notifications/hidden"]
    assert (show.kind, show.direction, show.result) == ("request", "app_to_host", m.UiShowResult)
    assert (hidden.kind, hidden.direction) == ("notification", "host_to_app")


def test_local_definitions_need_a_name_and_must_agree() -> None:
    value = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/__v"}}]}
    defs = {
        "A": {
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/__v"}},
            "$defs": {"__v": value},
        },
        "B": {
            "type": "object",
            "properties": {"v": {"$ref": "#/$defs/__v"}},
            "$defs": {"__v": value},
        },
    }
    with pytest.raises(GenerationError, match="local_definitions"):
        hoist_local_definitions(defs, "#/$defs/", {})
    lifted = hoist_local_definitions(defs, "#/$defs/", {"__v": "Value"})
    assert lifted["A"]["properties"]["v"] == {"$ref": "#/$defs/Value"}
    assert lifted["Value"]["anyOf"][1]["items"] == {"$ref": "#/$defs/Value"}
    assert "$defs" not in lifted["B"] and "__v" not in lifted
    other = {
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/__v"}},
        "$defs": {"__v": {"type": "integer"}},
    }
    with pytest.raises(GenerationError, match="differs between owners"):
        hoist_local_definitions({**defs, "C": other}, "#/$defs/", {"__v": "Value"})
    with pytest.raises(GenerationError, match="is taken"):
        hoist_local_definitions({**defs, "Value": {"type": "string"}}, "#/$defs/", {"__v": "Value"})
