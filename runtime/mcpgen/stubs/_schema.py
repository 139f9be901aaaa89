"""One JSON Schema document holding every tool's input and output schema, and the Python
names the typed client gives tools. Pure data work: no code generator is imported here.

Each tool schema becomes a `$defs` entry named after the tool (`EchoInput`, `EchoOutput`);
the schema's own `$defs`/`definitions` are hoisted beside it under the same prefix, and its
`$ref`s rewritten to match, so two tools that both define `Point` get two classes.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["ToolNames", "class_stem", "combined_schema", "method_names", "tag_unions"]

_DEFINITION_KEYS = ("$defs", "definitions")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+")


def _words(name: str) -> list[str]:
    return _WORDS.findall(name.replace("-", " ").replace(".", " ").replace("/", " "))


def class_stem(name: str) -> str:
    """`get_user-info` -> `GetUserInfo` (a class name prefix; `Tool` when nothing is left)."""
    stem = "".join(word[:1].upper() + word[1:] for word in _words(name))
    if not stem:
        return "Tool"
    return f"Tool{stem}" if stem[0].isdigit() else stem


def _snake(name: str) -> str:
    snake = "_".join(word.lower() for word in _words(name)) or "tool"
    if snake[0].isdigit():
        snake = f"tool_{snake}"
    return f"{snake}_" if keyword.iskeyword(snake) or keyword.issoftkeyword(snake) else snake


def method_names(tools: Iterable[str]) -> dict[str, str]:
    """Tool name -> a distinct snake_case method name (a clash gets `_2`, `_3`, ...; a
    tool already named in snake_case keeps its name whatever its place in the list)."""
    tools = list(tools)
    exact = {tool for tool in tools if _snake(tool) == tool}
    taken: set[str] = set(exact)
    names: dict[str, str] = {tool: tool for tool in exact}
    for tool in tools:
        if tool in exact:
            continue
        base = _snake(tool)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names[tool] = name
    return names


class ToolNames:
    """Hands out `$defs` names that are distinct once the generator turns them into
    class names (it keeps the key when it is a valid identifier)."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        name, n = wanted, 1
        while name.lower() in self.taken:
            n += 1
            name = f"{wanted}{n}"
        self.taken.add(name.lower())
        return name


def _rewrite(node: Any, refs: Mapping[str, str], root: str) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, refs, root) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DEFINITION_KEYS:
            continue  # hoisted by the caller
        if key == "$ref" and isinstance(value, str):
            out[key] = _target(value, refs, root)
        elif key == "discriminator" and isinstance(value, dict):
            # the mapping's references too, or the generator tags by class name instead
            mapping = value.get("mapping")
            out[key] = dict(value)
            if isinstance(mapping, dict):
                out[key]["mapping"] = {
                    k: _target(v, refs, root) if isinstance(v, str) else v
                    for k, v in mapping.items()
                }
        else:
            out[key] = _rewrite(value, refs, root)
    return out


def _target(ref: str, refs: Mapping[str, str], root: str) -> str:
    if ref == "#":
        return f"#/$defs/{root}"
    for key in _DEFINITION_KEYS:
        prefix = f"#/{key}/"
        if ref.startswith(prefix):
            head, sep, rest = ref[len(prefix) :].partition("/")
            if head in refs:
                return f"#/$defs/{refs[head]}{sep}{rest}"
    return ref  # an external or unusual reference: the generator reports it if it must


def _add(defs: dict[str, Any], names: ToolNames, schema: Mapping[str, Any], root: str) -> None:
    """Put `schema` at `$defs[root]`, hoisting its own definitions under `root`'s prefix."""
    local: dict[str, Mapping[str, Any]] = {}
    for key in _DEFINITION_KEYS:
        found = schema.get(key)
        if isinstance(found, Mapping):
            local.update({str(k): v for k, v in found.items()})
    refs = {name: names.claim(root + class_stem(name)) for name in local}
    for name, inner in local.items():
        hoisted = _rewrite(inner, refs, root) if isinstance(inner, Mapping) else inner
        if isinstance(hoisted, dict):
            hoisted.pop("title", None)  # the key names the class, not a title
        defs[refs[name]] = hoisted
    body = _rewrite(schema, refs, root)
    body.pop("title", None)
    body.pop("$schema", None)
    body.pop("$id", None)
    defs[root] = body


def combined_schema(
    tools: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any] | None]],
) -> tuple[dict[str, Any], dict[str, tuple[str, str | None]]]:
    """(one schema document with every tool's models in `$defs`, tool -> (input class name,
    output class name or None)) from (name, input schema, output schema) triples."""
    names = ToolNames()
    defs: dict[str, Any] = {}
    models: dict[str, tuple[str, str | None]] = {}
    for tool, input_schema, output_schema in tools:
        stem = class_stem(tool)
        input_name = names.claim(f"{stem}Input")
        _add(defs, names, input_schema, input_name)
        output_name = None
        if output_schema is not None:
            output_name = names.claim(f"{stem}Output")
            _add(defs, names, output_schema, output_name)
        models[tool] = (input_name, output_name)
    tag_unions(defs)
    return {"$defs": defs}, models


def _tags(branch: Any) -> dict[str, str]:
    """A union branch's required properties of one constant string value: name -> value."""
    if not isinstance(branch, Mapping) or branch.get("type", "object") != "object":
        return {}
    properties = branch.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    found: dict[str, str] = {}
    for name in branch.get("required") or ():
        prop = properties.get(name)
        if not isinstance(prop, Mapping):
            continue
        value = prop.get("const")
        if value is None and isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
            value = prop["enum"][0]
        if isinstance(value, str):
            found[str(name)] = value
    return found


def _discriminator(branches: list[Any], defs: Mapping[str, Any]) -> str | None:
    """The property telling a union's object branches apart, when there is one."""
    resolved = []
    for branch in branches:
        ref = branch.get("$ref") if isinstance(branch, Mapping) else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            resolved.append(_tags(defs.get(ref.removeprefix("#/$defs/"))))
        else:
            resolved.append(_tags(branch))
    if len(resolved) < 2 or not all(resolved):
        return None
    shared = set.intersection(*(set(tags) for tags in resolved))
    for name in sorted(shared, key=lambda n: (n not in ("type", "kind"), n)):
        if len({tags[name] for tags in resolved}) == len(resolved):
            return name
    return None


def tag_unions(defs: dict[str, Any]) -> None:
    """Mark each union of object schemas told apart by a constant property with that
    property as its discriminator, so that its classes become msgspec tagged structs
    (msgspec decodes a union of several structs only when they are tagged)."""

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and "discriminator" not in node:
                name = _discriminator(branches, defs)
                if name is not None:
                    node["discriminator"] = {"propertyName": name}
        for value in node.values():
            visit(value)

    visit(defs)
