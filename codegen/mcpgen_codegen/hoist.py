"""Step 1b: definitions that carry definitions of their own, lifted to the top.

Some schema emitters (Zod's, which writes the MCP Apps schema) make every definition a
document of its own: it repeats `$schema` and keeps a private `$defs` that its `$ref`s
point into (`#/$defs/__schema0`, meaning *its own* `$defs`). Lifting those to the
document's `$defs` under a name from the policy (`[objects] local_definitions`) lets the
rest of the pipeline treat them like any definition. Copies that are equal in every
owner become one definition; copies that differ stop generation.
"""

from __future__ import annotations

import json
from typing import Any

from mcpgen_codegen.config import GenerationError


def hoist_local_definitions(
    defs: dict[str, Any], prefix: str, names: dict[str, str]
) -> dict[str, Any]:
    """`defs` with every nested `$defs` lifted; the input is not modified."""
    out = dict(defs)
    lifted: dict[str, Any] = {}
    for owner in sorted(defs):
        node = defs[owner]
        local = node.get("$defs") if isinstance(node, dict) else None
        if not local:
            continue
        renamed = {}
        for key in local:
            if key not in names:
                raise GenerationError(
                    f"{owner}: local definition {key!r} needs a name in policy.toml "
                    f"([objects] local_definitions)"
                )
            renamed[key] = names[key]
        for key, source in local.items():
            name = renamed[key]
            body = _retarget(source, prefix, renamed)
            if name in defs:
                raise GenerationError(f"{owner}: local definition {key!r} -> {name!r} is taken")
            if name in lifted and _canonical(lifted[name]) != _canonical(body):
                raise GenerationError(f"{owner}: local definition {key!r} differs between owners")
            lifted.setdefault(name, body)
        out[owner] = _retarget({k: v for k, v in node.items() if k != "$defs"}, prefix, renamed)
    out.update(lifted)
    return out


def _retarget(node: Any, prefix: str, renamed: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_retarget(item, prefix, renamed) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {k: _retarget(v, prefix, renamed) for k, v in node.items()}
    ref = copy.get("$ref")
    if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in renamed:
        copy["$ref"] = prefix + renamed[ref[len(prefix) :]]
    return copy


def _canonical(node: Any) -> str:
    return json.dumps(node, sort_keys=True)
