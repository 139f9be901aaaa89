"""The pure parts of `mcpgen stubs`: names, the combined schema document, and the errors
for a missing extra or an unusable class name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpgen import ConfigurationError
from mcpgen.stubs import ToolSpec, render
from mcpgen.stubs._schema import class_stem, combined_schema, method_names


def test_method_names_are_snake_case_keyword_safe_and_distinct() -> None:
    names = method_names(["getUserInfo", "get-user.info", "import", "2fa", "HTTPServer", "_x"])
    assert names == {
        "getUserInfo": "get_user_info",
        "get-user.info": "get_user_info_2",
        "import": "import_",
        "2fa": "tool_2fa",
        "HTTPServer": "http_server",
        "_x": "x",
    }
    assert method_names(["match", "###"]) == {"match": "match_", "###": "tool"}


def test_class_stems() -> None:
    assert class_stem("get-user_info") == "GetUserInfo"
    assert class_stem("3d") == "Tool3d"
    assert class_stem("--") == "Tool"


def test_each_tool_gets_its_own_prefixed_definitions() -> None:
    point = {"type": "object", "properties": {"x": {"type": "number"}}}
    a = {
        "title": "ignored",
        "properties": {"p": {"$ref": "#/$defs/Point"}, "self": {"$ref": "#"}},
        "$defs": {"Point": point},
    }
    b = {
        "properties": {"p": {"$ref": "#/definitions/Point/properties/x"}},
        "definitions": {"Point": point},
    }
    schema, models = combined_schema([("a", a, b), ("A", {"type": "object"}, None)])
    assert models == {"a": ("AInput", "AOutput"), "A": ("AInput2", None)}
    defs = schema["$defs"]
    assert set(defs) == {"AInput", "AInputPoint", "AOutput", "AOutputPoint", "AInput2"}
    assert defs["AInput"]["properties"] == {
        "p": {"$ref": "#/$defs/AInputPoint"},
        "self": {"$ref": "#/$defs/AInput"},
    }
    assert defs["AOutput"]["properties"]["p"] == {"$ref": "#/$defs/AOutputPoint/properties/x"}
    assert "title" not in defs["AInput"] and "$defs" not in defs["AInput"]


def test_a_missing_generator_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datamodel_code_generator", None)
    tool = ToolSpec("echo", "", {"type": "object"}, None)
    with pytest.raises(ConfigurationError, match=r"pip install 'mcpgen\[stubs\]'"):
        render([tool], None, Path("tools.py"))


def test_class_name_must_be_free_and_an_identifier(tmp_path: Path) -> None:
    nested = {
        "type": "object",
        "properties": {"tools": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    tool = ToolSpec("echo", "", nested, None)
    with pytest.raises(ConfigurationError, match="--class-name"):
        render([tool], None, tmp_path / "m.py", "Tools")
    with pytest.raises(ConfigurationError, match="identifier"):
        render([tool], None, tmp_path / "m.py", "not valid")
    assert "class Client2:" in render([tool], None, tmp_path / "m.py", "Client2")


def test_a_remote_ref_is_refused_not_fetched(tmp_path: Path) -> None:
    """A server's schema must not make the generator fetch a URL."""
    schema = {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}}
    with pytest.raises(ConfigurationError, match=r"refused the schemas(.|\n)*remote"):
        render([ToolSpec("echo", "", schema, None)], None, tmp_path / "m.py")
