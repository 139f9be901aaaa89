"""Apply `schema/patches.toml` to a loaded schema (RFC 6901 JSON pointers)."""

from __future__ import annotations

import copy
from typing import Any

from mcpgen_codegen.config import GenerationError, Patch


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _walk(doc: Any, pointer: str) -> tuple[Any, str | int]:
    if not pointer.startswith("/"):
        raise GenerationError(f"patch pointer {pointer!r} must start with '/'")
    tokens = [_unescape(t) for t in pointer[1:].split("/")]
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token, pointer)
    last = tokens[-1]
    if isinstance(node, list):
        return node, _index(last, pointer)
    if not isinstance(node, dict):
        raise GenerationError(f"patch pointer {pointer!r} does not lead to an object or array")
    return node, last


def _index(token: str, pointer: str) -> int:
    if not token.isdigit():
        raise GenerationError(f"patch pointer {pointer!r}: {token!r} is not an array index")
    return int(token)


def _child(node: Any, token: str, pointer: str) -> Any:
    try:
        if isinstance(node, list):
            return node[_index(token, pointer)]
        return node[token]
    except (KeyError, IndexError, TypeError):
        raise GenerationError(f"patch pointer {pointer!r}: nothing at {token!r}") from None


def apply_patches(
    schema: dict[str, Any], version: str, patches: tuple[Patch, ...]
) -> dict[str, Any]:
    """Return a patched deep copy; abort when a patch's `old` value no longer matches."""
    doc = copy.deepcopy(schema)
    for patch in patches:
        if version not in patch.revisions:
            continue
        parent, key = _walk(doc, patch.pointer)
        try:
            current = parent[key]
        except (KeyError, IndexError):
            current = _MISSING
        if current != patch.old:
            raise GenerationError(
                f"patch {patch.pointer} for {version} expected {patch.old!r} but found "
                f"{current if current is not _MISSING else '(nothing)'!r}: upstream changed; "
                "review the patch in schema/patches.toml and drop or update it"
            )
        parent[key] = copy.deepcopy(patch.new)
    return doc


def add_properties(
    schema: dict[str, Any], version: str, added: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Return a copy of `schema` whose definitions gain the optional properties `added`
    (policy `[added.<role>]`); abort when a definition is missing or already has one."""
    doc = copy.deepcopy(schema)
    defs = doc.get("$defs", doc.get("definitions", {}))  # 2020-12 or draft-07
    for name, props in added.items():
        definition = defs.get(name)
        if not isinstance(definition, dict):
            raise GenerationError(f"policy [added]: {version} has no definition {name}")
        properties = definition.setdefault("properties", {})
        for key, value in props.items():
            if key in properties:
                raise GenerationError(
                    f"policy [added]: {version} already defines {name}.{key}; drop the entry"
                )
            properties[key] = copy.deepcopy(value)
    return doc


_MISSING = object()
