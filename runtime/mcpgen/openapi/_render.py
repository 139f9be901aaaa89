"""The module `mcpgen openapi` writes: the models (datamodel-code-generator, as for
`mcpgen stubs`), the security schemes, one `Operation` per endpoint and a `register`
function defining one typed async tool per operation on a `Server`.
"""

from __future__ import annotations

import ast
import io
import json
import textwrap
import tokenize
from pathlib import Path
from tokenize import NAME
from typing import Any

from mcpgen.openapi._spec import RESERVED, Document, Op, Param
from mcpgen.stubs._decodable import decodable, undecodable
from mcpgen.stubs._models import ROOT, generate_models
from mcpgen.stubs._render import _ruff

__all__ = ["render"]

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


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip())] + (
        "    " if line.lstrip().startswith("-") else ""
    )


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
    width = 88 - len(indent) - 4  # no line too long for any ruff configuration's E501
    lines = [
        wrapped
        for line in text.splitlines()
        for wrapped in (textwrap.wrap(line, width, subsequent_indent=_lead(line)) or [""])
    ]
    if lines[-1].endswith('"'):
        lines[-1] += " "  # a closing quote would run into the docstring's own
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [
        f'{indent}"""{lines[0]}',
        *(f"{indent}{line}".rstrip() for line in lines[1:]),
        f'{indent}"""',
    ]


def _signature(params: list[Param], untyped: set[str]) -> str:
    ordered = sorted(params, key=lambda p: not p.required)  # required first
    parts = ["ctx: Context"]
    for p in ordered:
        kind = "Any" if p.python in untyped else annotation(p.schema)
        if p.required:
            parts.append(f"{p.python}: {kind}")
        else:
            default = p.schema.get("default") if isinstance(p.schema, dict) else None
            if _fits(default, kind) and p.location != "body":
                parts.append(f"{p.python}: {kind} = {default!r}")
            else:
                nullable = kind == "None" or kind.endswith(" | None") or "None |" in kind
                parts.append(f"{p.python}: {kind}{'' if nullable else ' | None'} = None")
    return ", ".join(parts)


def _fits(default: Any, kind: str) -> bool:
    """A default the annotation takes as it is (documents do say `default: "10"` for an
    integer): otherwise the parameter defaults to None, and the API to its own."""
    if isinstance(default, bool):
        return kind == "bool"
    if isinstance(default, int):
        return kind in ("int", "float")
    if isinstance(default, float):
        return kind == "float"
    if isinstance(default, str):
        return kind == "str" or (kind.startswith("Literal[") and json.dumps(default) in kind)
    return False


def _result(op: Op, untyped: set[str]) -> str:
    if "return" in untyped:
        return "Any"
    if op.response is None:
        return "str"
    return annotation(op.response)


def _tool(op: Op, untyped: set[str]) -> list[str]:
    constant = op.tool.upper()
    lines = [
        f"    @server.tool(name={op.tool!r}, annotations={_hints(op.method)})",
        f"    async def {op.tool}({_signature(op.params, untyped)}) -> {_result(op, untyped)}:",
    ]
    doc = op.summary or f"{op.method} {op.path}"
    if untyped:
        names = ", ".join(sorted(n if n != "return" else "the result" for n in untyped))
        doc += f"\n\nUntyped ({names}): the document's schema has no msgspec type."
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
    result = _result(op, untyped)
    call = ", ".join([f"ctx, {constant}, {result}", *args])
    lines.append(f"        found: {result} = await api.call({call})")
    lines.append("        return found")
    return lines


def _resource(op: Op, untyped: set[str]) -> list[str]:
    """A GET operation served as a resource, or a resource template when its path has
    parameters: the API's JSON answer as the resource's text."""
    path = [p for p in op.params if p.location == "path"]
    kind = (
        f"server.resource_template({op.resource!r}" if path else f"server.resource({op.resource!r}"
    )
    lines = [
        f"    @{kind}, name={op.tool!r}, mime_type='application/json')",
        f"    async def {op.tool}({', '.join(f'{p.python}: str' for p in path)}) -> str:",
    ]
    lines += _doc(op.summary or f"{op.method} {op.path}", "        ")
    result = _result(op, untyped)
    args = f", path={{{', '.join(f'{p.name!r}: {p.python}' for p in path)}}}" if path else ""
    lines.append(
        f"        found: {result} = await api.call(None, {op.tool.upper()}, {result}{args})"
    )
    lines.append("        return msgspec.json.encode(found).decode()")
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


def _models(schema: dict[str, Any]) -> str:
    """The models, as for `mcpgen stubs` but for documents written by hand: a class
    inherits only where its parents' layouts agree."""
    hierarchy = {"allof_class_hierarchy": "if-no-conflict"}
    code = generate_models(schema, "mcpgen openapi", "openapi", **hierarchy)
    return decodable(code, "the document's schemas")


def _renamed(code: str) -> str:
    """The model generator names inline objects itself (`apis: [{...}]` -> `Api`): one
    that would shadow a name the module uses gets a `Model` suffix, everywhere."""
    defined = {
        target.id
        for node in ast.parse(code).body
        for target in (
            [ast.Name(node.name)] if isinstance(node, ast.ClassDef)
            else [node.target] if isinstance(node, ast.AnnAssign)
            else node.targets if isinstance(node, ast.Assign) else []
        )
        if isinstance(target, ast.Name)
    }  # fmt: skip
    clash = {name: f"{name}Model" for name in defined & RESERVED}
    if not clash:
        return code
    tokens = [
        tok._replace(string=clash.get(tok.string, tok.string)) if tok.type == NAME else tok
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
    ]
    return tokenize.untokenize(tokens)


def _model_code(doc: Document) -> str:
    code = _renamed(_models({"$defs": doc.defs})) if doc.defs else ""
    tree = ast.parse(code)
    kept = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == ROOT for t in targets):
                continue
        segment = ast.get_source_segment(code, node)
        if segment is not None:
            kept.append(segment)
    return "\n\n".join(kept)


def render(doc: Document, path: Path, base_url: str | None = None) -> str:
    """The module's text, formatted under the ruff configuration that applies to `path`.
    A parameter or result whose type msgspec cannot decode (an untagged union of
    structs, an enum of mixed values) is written as `Any`, and the tool says so."""
    url = base_url or (doc.servers[0] if doc.servers else "")
    untyped: dict[str, set[str]] = {op.tool: set() for op in doc.ops}
    text = _text(doc, url, untyped)
    found = _undecodable(text, doc)
    if any(found.values()):
        text = _text(doc, url, found)
    return _ruff(text, path)


def _undecodable(text: str, doc: Document) -> dict[str, set[str]]:
    """Per tool, the parameters (and `return`) whose annotation msgspec refuses."""
    wanted = {
        (op.tool, arg): kind
        for op in doc.ops
        for arg, kind in [
            *((p.python, annotation(p.schema)) for p in op.params),
            ("return", _result(op, set())),
        ]
    }
    refused = undecodable(text, wanted)
    return {op.tool: {arg for tool, arg in refused if tool == op.tool} for op in doc.ops}


def _text(doc: Document, url: str, untyped: dict[str, set[str]]) -> str:
    header = [
        *_doc(
            f"Tools for {doc.title} {doc.version}, generated by `mcpgen openapi` from "
            f"{doc.source} (sha256 {doc.sha256}).\n\n"
            "Do not edit: run `mcpgen openapi` again (`--check` says whether this file is "
            f"current). {len(doc.ops)} operations; `register(server)` adds one tool for each."
            + (
                "\n\nRefused operations:\n" + "\n".join(f"- {r}" for r in doc.refused)
                if doc.refused
                else ""
            ),
            "",
        ),
        "",
    ]
    lines = [
        *header,
        "from __future__ import annotations",
        "",
        "from typing import Any, Literal",
        "",
        "import msgspec",
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
        made = _resource(op, untyped[op.tool]) if op.resource else _tool(op, untyped[op.tool])
        lines += ["", *made]
    lines += ["", "    return api", ""]
    return "\n".join(lines)
