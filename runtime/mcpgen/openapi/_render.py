"""The module `mcpgen openapi` writes: the models (datamodel-code-generator, as for
`mcpgen stubs`), the security schemes, one `Operation` per endpoint and a `register`
function defining one typed async tool per operation on a `Server`.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from mcpgen.openapi._spec import Document, Op, Param
from mcpgen.stubs._render import _models, _ruff

__all__ = ["render"]

_ROOT = "StubsUnusedRoot"  # the model generator's name for the document root (dropped)
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_READ = {"GET", "HEAD", "OPTIONS"}


def annotation(schema: Any) -> str:
    """A parameter's or a result's Python type, from its (retargeted) JSON Schema."""
    if not isinstance(schema, dict) or not schema:
        return "Any"
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[1]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            members = [annotation(m) for m in schema[key]]
            if "Any" in members:
                return "Any"
            return " | ".join(dict.fromkeys(members))
    if "enum" in schema and all(isinstance(v, str | int) for v in schema["enum"]):
        return "Literal[" + ", ".join(json.dumps(v) for v in schema["enum"]) + "]"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(annotation({**schema, "type": k}) for k in kind)
    if kind == "array":
        return f"list[{annotation(schema.get('items') or {})}]"
    if kind == "object" or "properties" in schema:
        return "dict[str, Any]"
    return _SCALARS.get(str(kind), "Any")


def _hints(method: str) -> str:
    if method in _READ:
        return "ToolAnnotations(read_only_hint=True, open_world_hint=True)"
    destructive = method in ("PUT", "DELETE")
    idempotent = method in ("PUT", "DELETE")
    return (
        f"ToolAnnotations(read_only_hint=False, destructive_hint={destructive}, "
        f"idempotent_hint={idempotent}, open_world_hint=True)"
    )


def _doc(text: str, indent: str) -> list[str]:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    if not text:
        return []
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [
        f'{indent}"""{lines[0]}',
        *(f"{indent}{line}".rstrip() for line in lines[1:]),
        f'{indent}"""',
    ]


def _signature(params: list[Param]) -> str:
    ordered = sorted(params, key=lambda p: not p.required)  # required first
    parts = ["ctx: Context"]
    for p in ordered:
        kind = annotation(p.schema)
        if p.required:
            parts.append(f"{p.python}: {kind}")
        else:
            default = p.schema.get("default") if isinstance(p.schema, dict) else None
            if isinstance(default, str | int | float | bool) and p.location != "body":
                parts.append(f"{p.python}: {kind} = {default!r}")
            else:
                nullable = kind == "None" or kind.endswith(" | None") or "None |" in kind
                parts.append(f"{p.python}: {kind}{'' if nullable else ' | None'} = None")
    return ", ".join(parts)


def _result(op: Op) -> str:
    if op.response is None:
        return "str"
    return annotation(op.response)


def _tool(op: Op) -> list[str]:
    constant = op.tool.upper()
    lines = [
        f"    @server.tool(name={op.tool!r}, annotations={_hints(op.method)})",
        f"    async def {op.tool}({_signature(op.params)}) -> {_result(op)}:",
    ]
    doc = op.summary or f"{op.method} {op.path}"
    described = [p for p in op.params if p.description]
    if described:
        doc += "\n\nArgs:\n" + "\n".join(
            f"    {p.python}: {' '.join(p.description.split())}" for p in described
        )
    lines += _doc(doc, "        ")
    args = []
    for where, keyword in (("path", "path"), ("query", "query"), ("header", "headers")):
        chosen = [p for p in op.params if p.location == where]
        if chosen:
            pairs = ", ".join(f"{p.name!r}: {p.python}" for p in chosen)
            args.append(f"{keyword}={{{pairs}}}")
    body = next((p for p in op.params if p.location == "body"), None)
    if body is not None:
        args.append(f"body={body.python}")
    call = ", ".join([f"ctx, {constant}, {_result(op)}", *args])
    lines.append(f"        return await api.call({call})")
    return lines


def _operation(op: Op) -> str:
    fields = [repr(op.method), repr(op.path), repr(op.operation_id)]
    extra = [f"ok={op.ok!r}"]
    if op.security:
        extra.append(f"security={op.security!r}")
    if op.body:
        extra.append(f"body={op.body!r}")
    return f"{op.tool.upper()} = Operation({', '.join(fields + extra)})"


def _schemes(doc: Document) -> list[str]:
    lines = ["SCHEMES: dict[str, Scheme] = {"]
    for name, raw in sorted(doc.schemes.items()):
        kind = str(raw.get("type"))
        if kind == "apiKey":
            spec = f"Scheme('apiKey', {raw.get('in')!r}, {raw.get('name')!r})"
        elif kind == "http":
            spec = f"Scheme('http', scheme={str(raw.get('scheme', 'bearer')).lower()!r})"
        elif kind in ("oauth2", "openIdConnect"):
            spec = f"Scheme({kind!r})"
        else:
            continue
        lines.append(f"    {name!r}: {spec},")
    lines.append("}")
    return lines


def _model_code(doc: Document) -> str:
    code = _models({"$defs": doc.defs}) if doc.defs else ""
    tree = ast.parse(code)
    kept = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == _ROOT for t in targets):
                continue
        segment = ast.get_source_segment(code, node)
        if segment is not None:
            kept.append(segment)
    return "\n\n".join(kept)


def render(doc: Document, path: Path, base_url: str | None = None) -> str:
    """The module's text, formatted under the ruff configuration that applies to `path`."""
    url = base_url or (doc.servers[0] if doc.servers else "")
    header = [
        "# ruff: noqa: E501 (the API's descriptions are kept whole)",
        f'"""Tools for {doc.title} {doc.version}, generated by `mcpgen openapi` from',
        f"{doc.source} (sha256 {doc.sha256}).",
        "",
        "Do not edit: run `mcpgen openapi` again (`--check` tells whether this file is current).",
        f"{len(doc.ops)} operations; `register(server)` adds one tool for each.",
    ]
    if doc.refused:
        header += ["", "Refused operations:", *(f"- {line}" for line in doc.refused)]
    header += ['"""', ""]
    lines = [
        *header,
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal",
        "",
        "from mcpgen import Context, Server",
        "from mcpgen.openapi import Api, ApiAuth, Operation, Scheme",
        "from mcpgen.types import ToolAnnotations",
        "",
        _model_code(doc),
        "",
        f"BASE_URL = {url!r}",
        *_schemes(doc),
        *(_operation(op) for op in doc.ops),
        "",
        "",
        "def register(",
        "    server: Server, api: Api | None = None, *, auth: ApiAuth | None = None",
        ") -> Api:",
        '    """Add the API\'s tools to `server`; `api` sends their requests (default: one',
        '    `Api(BASE_URL, SCHEMES, auth=auth)`). Returns the `Api` (close it at shutdown)."""',
        "    api = api if api is not None else Api(BASE_URL, SCHEMES, auth=auth)",
    ]
    for op in doc.ops:
        lines += ["", *_tool(op)]
    lines += ["", "    return api", ""]
    return _ruff("\n".join(lines), path)
