"""Step 7: the tables a runtime dispatches on, derived from the schema plus policy.

* METHODS: method -> message struct, params struct, result struct, direction,
  whether it may answer with an input-required result (MRTR), whether its result is
  cacheable (carries the cache fields).
* `_meta` keys: every key a `*MetaObject` definition or an inline `_meta` names.
* error codes: definitions that pin `code` (directly or in their `error`), plus the
  JSON-RPC/role codes from the policy that older schemas leave to prose.
"""

from __future__ import annotations

import re
from typing import Any

from mcpgen_codegen.config import Direction, GenerationError, Policy, Role
from mcpgen_codegen.ir import MethodIR, StructIR
from mcpgen_codegen.shapes import Lit, Obj, Ref, Shape, Union

_REQUEST_SUFFIX = "Request"


def _method_of(shape: Shape) -> str | None:
    if isinstance(shape, Obj):
        prop = shape.prop("method")
        if isinstance(prop, Lit) and len(prop.values) == 1 and "method" in shape.required:
            value = prop.values[0]
            return value if isinstance(value, str) else None
    return None


def _members(name: str, shapes: dict[str, Shape]) -> list[str]:
    shape = shapes.get(name)
    if isinstance(shape, Union):
        return [m.name for m in shape.members if isinstance(m, Ref)]
    if isinstance(shape, Ref):  # a one-member union simplifies to a reference
        return [shape.name]
    if isinstance(shape, Obj):
        return [name]
    return []


def build_methods(
    shapes: dict[str, Shape], structs: dict[str, StructIR], policy: Policy
) -> list[MethodIR]:
    union_names = set(policy.direction_unions)
    by_method: dict[str, list[str]] = {}
    for name in sorted(shapes):
        method = _method_of(shapes[name])
        if method is not None:
            by_method.setdefault(method, []).append(name)
    directions: dict[str, set[Direction]] = {}
    kinds: dict[str, str] = {}
    for union, side in sorted(policy.direction_unions.items()):
        for member in _members(union, shapes):
            method = _method_of(shapes[member])
            if method is None:
                continue
            directions.setdefault(method, set()).add(side)
            kinds[method] = "notification" if "Notification" in union else "request"
    out = []
    for method, defs in sorted(by_method.items()):
        candidates = [d for d in defs if d not in union_names] or defs
        message = candidates[0]
        shape = shapes[message]
        assert isinstance(shape, Obj)
        kind = kinds.get(method) or _kind_of(message, shape)
        found = directions.get(method, set())
        if found >= {"client_to_server", "server_to_client"}:
            direction: Direction = "both"
        elif len(found) == 1:
            direction = next(iter(found))
        elif method in policy.directions:
            direction = policy.directions[method]
        else:
            raise GenerationError(
                f"method {method!r} ({message}) is in no direction union; add it to "
                "[methods.direction] in schema/policy.toml"
            )
        struct = structs.get(message)
        params_field = None
        if struct is not None:
            params_field = next((f for f in struct.fields if f.wire == "params"), None)
        params = None
        params_required = False
        if params_field is not None and params_field.type.kind == "ref":
            params = params_field.type.name
            params_required = params_field.required
        result = None
        input_required = cacheable = False
        if kind == "request":
            result = _result_for(message, shapes, policy)
            input_required = _may_need_input(result, shapes, policy)
            cacheable = _cacheable(result, shapes, policy)
        out.append(
            MethodIR(method, kind, direction, message, params, params_required, result,
                     input_required, cacheable)
        )  # fmt: skip
    return out


def _result_for(message: str, shapes: dict[str, Shape], policy: Policy) -> str:
    if message in policy.results:
        return policy.results[message]
    if message.endswith(_REQUEST_SUFFIX):
        candidate = message[: -len(_REQUEST_SUFFIX)] + "Result"
        if candidate in shapes:
            return candidate
    for fallback in ("EmptyResult", "Result"):
        if fallback in shapes:
            return fallback
    raise GenerationError(f"no result definition for {message}; add it to [methods.results]")


def _may_need_input(result: str, shapes: dict[str, Shape], policy: Policy) -> bool:
    marker = policy.input_required_result
    response = shapes.get(result + "Response")
    if not marker or not isinstance(response, Obj):
        return False
    inner = response.prop("result")
    return isinstance(inner, Union) and Ref(marker) in inner.members


def _cacheable(result: str, shapes: dict[str, Shape], policy: Policy) -> bool:
    shape = shapes.get(result)
    fields = policy.cacheable_fields
    return bool(fields) and isinstance(shape, Obj) and set(fields) <= shape.required


# -- _meta keys ---------------------------------------------------------------------------
def collect_meta_keys(defs: dict[str, Any]) -> list[tuple[str, str]]:
    keys: set[str] = set()

    def walk(node: Any, meta: bool) -> None:
        if isinstance(node, dict):
            if meta:
                keys.update((node.get("properties") or {}).keys())
            for k, v in node.items():
                if k == "properties" and isinstance(v, dict):
                    for prop, sub in v.items():
                        walk(sub, prop == "_meta")
                elif k != "description":
                    walk(v, False)
        elif isinstance(node, list):
            for v in node:
                walk(v, False)

    for name, node in defs.items():
        walk(node, name.endswith("MetaObject"))
    out: dict[str, str] = {}
    for key in sorted(keys):
        const = "META_" + constant_case(key.rsplit("/", 1)[-1])
        if const in out:
            const = "META_" + constant_case(key)
        out[const] = key
    return sorted(out.items())


# -- error codes --------------------------------------------------------------------------
def collect_error_codes(
    shapes: dict[str, Shape], role: Role, policy: Policy
) -> list[tuple[str, int]]:
    codes: dict[str, int] = dict(policy.base_error_codes)
    codes.update(policy.role_error_codes.get(role, {}))
    for name in sorted(shapes):
        code = _pinned_code(shapes[name])
        if code is None:
            continue
        const = constant_case(name[: -len("Error")] if name.endswith("Error") else name)
        if "_" not in const:
            const += "_ERROR"
        if codes.get(const, code) != code:
            raise GenerationError(f"error constant {const} would be both {codes[const]} and {code}")
        codes[const] = code
    return sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))


def _pinned_code(shape: Shape) -> int | None:
    if not isinstance(shape, Obj):
        return None
    for candidate in (shape, shape.prop("error")):
        if isinstance(candidate, Obj):
            code = candidate.prop("code")
            if isinstance(code, Lit) and len(code.values) == 1 and isinstance(code.values[0], int):
                return code.values[0]
    return None


def constant_case(text: str) -> str:
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").upper()


def _kind_of(message: str, shape: Obj) -> str:
    """A message no union classifies: one with an `id` is a request; so is one named
    `...Request` (the MCP Apps schema describes its messages without the JSON-RPC
    envelope)."""
    if shape.prop("id") is not None or message.endswith("Request"):
        return "request"
    return "notification"
