"""The typed client module: datamodel-code-generator writes the structs, this module
writes the rest (header, helpers, the class of one method per tool) and ruff formats
the whole so the file passes `ruff format --check` and `ruff check` as written.

The generator and ruff are imported or run only here, on demand; a missing one raises
`ConfigurationError` naming the `stubs` extra.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpgen._errors import ConfigurationError
from mcpgen.stubs._decodable import decodable
from mcpgen.stubs._models import ROOT, generate_models
from mcpgen.stubs._schema import combined_schema, method_names

__all__ = ["ToolSpec", "render"]

_INSTALL = "pip install 'mcpgen[stubs]'"
_NOQA = "# ruff: noqa: E501 (the server's descriptions are kept whole)"
_FIXES = "I,F401,RUF036"  # import order, unused imports, `None` last in a union
_HELPERS = ("_arguments", "_decode", "_T", "Any", "Client", "ToolError", "CallToolResult")

_PRELUDE = """
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from mcpgen import Client, ProtocolViolationError, ToolError
from mcpgen.types import CallToolResult
"""

_HELPER_CODE = '''
_T = TypeVar("_T")


def _arguments(values: dict[str, object]) -> dict[str, Any]:
    """The arguments as JSON values, leaving out those left unset."""
    return {key: msgspec.to_builtins(value) for key, value in values.items() if value is not UNSET}


def _decode(result: CallToolResult, name: str, model: type[_T]) -> _T:
    """The tool's structured content as `model`."""
    if result.structured_content is UNSET:
        raise ProtocolViolationError(
            f"tool {name!r} declares an output schema but sent no structured content"
        )
    return msgspec.convert(result.structured_content, model)
'''


@dataclass(frozen=True)
class ToolSpec:
    """What the module is written from: one tool of `tools/list`."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None


@dataclass(frozen=True)
class _Param:
    python: str  # the keyword argument
    wire: str  # the argument's name in `arguments`
    annotation: str
    required: bool


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _models(schema: dict[str, Any]) -> str:
    code = generate_models(
        schema,
        "mcpgen stubs",
        "stubs",
        snake_case_field=True,  # `dryRun` is `dry_run`
    )
    return decodable(code) if code else ""


def _fields(node: ast.ClassDef, source: str) -> list[_Param]:
    params = []
    for item in node.body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        wire = item.target.id
        required = item.value is None
        if isinstance(item.value, ast.Call):  # `= field(name=...)`: a default only if given
            keywords = {kw.arg: kw.value for kw in item.value.keywords}
            name = keywords.get("name")
            if isinstance(name, ast.Constant):
                wire = str(name.value)
            required = "default" not in keywords and "default_factory" not in keywords
        annotation = ast.get_source_segment(source, item.annotation) or "Any"
        params.append(_Param(item.target.id, wire, annotation, required))
    return params


class _NoDescriptions(ast.NodeTransformer):
    """Drops `Meta(description=...)` from an annotation (the parameter's docstring is the
    tool's; the struct keeps the descriptions), unwrapping an `Annotated` left bare."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "Meta":
            node.keywords = [kw for kw in node.keywords if kw.arg != "description"]
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.value, ast.Name) and node.value.id == "Annotated"):
            return node
        if not isinstance(node.slice, ast.Tuple):
            return node
        extras = [
            item
            for item in node.slice.elts[1:]
            if not (isinstance(item, ast.Call) and not item.args and not item.keywords)
        ]
        if not extras:
            return node.slice.elts[0]
        node.slice.elts = [node.slice.elts[0], *extras]
        return node


def _parameter_type(annotation: str, required: bool) -> str:
    """A field's annotation as a parameter's: without descriptions and, when optional,
    widened by `UnsetType` if it does not take it already."""
    node = _NoDescriptions().visit(ast.parse(annotation, mode="eval").body)
    annotation = ast.unparse(node)
    if required:
        return annotation
    members = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        members.append(node.right)
        node = node.left
    members.append(node)
    if any(isinstance(m, ast.Name) and m.id == "UnsetType" for m in members):
        return annotation
    return f"{annotation} | UnsetType"


def _docstring(text: str, indent: str) -> list[str]:
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text:
        return []
    lines: list[str] = []
    for paragraph in text.split("\n"):
        wrapped = textwrap.wrap(paragraph, 72) or [""]
        lines.extend(f"{indent}{line}".rstrip() for line in wrapped)
    lines[0] = f'{indent}"""{lines[0].lstrip()}'
    if lines[-1].endswith('"'):
        lines[-1] += " "
    if len(lines) == 1:
        return [lines[0] + '"""']
    return [*lines, f'{indent}"""']


def _method(
    tool: ToolSpec, method: str, params: list[_Param] | None, output: str | None, taken: set[str]
) -> list[str]:
    head = f"    async def {method}(self"
    if params is None:  # an input schema that is no object of named properties
        head += ", arguments: dict[str, Any] | None = None"
        call = f"await self._call({tool.name!r}, arguments or {{}})"
    else:
        named: list[tuple[str, _Param]] = []
        for param in params:
            python = param.python
            while python in taken or python == "self":
                python += "_"
            named.append((python, param))
        if named:
            head += ", *"
        for python, param in sorted(named, key=lambda pair: not pair[1].required):
            annotation = _parameter_type(param.annotation, param.required)
            head += f", {python}: {annotation}" + ("" if param.required else " = UNSET")
        values = ", ".join(f"{param.wire!r}: {python}" for python, param in named)
        call = f"await self._call({tool.name!r}, {{{values}}})"
    returns = output or "CallToolResult"
    lines = [f"{head}) -> {returns}:", *_docstring(tool.description, " " * 8)]
    if output is None:
        lines.append(f"        return {call}")
    else:
        lines.append(f"        return _decode({call}, {tool.name!r}, {output})")
    return lines


def _class(
    name: str, server: str, tools: Sequence[ToolSpec], body: list[str], code: str
) -> list[str]:
    tree = ast.parse(code) if code else ast.Module(body=[], type_ignores=[])
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if name in classes:
        raise ConfigurationError(f"a generated model is named {name!r}: pick another --class-name")
    taken = (
        set(classes) | set(_HELPERS) | {"msgspec", "UNSET", "UnsetType", "ProtocolViolationError"}
    )
    _, models = combined_schema((t.name, t.input_schema, t.output_schema) for t in tools)
    lines = [
        f"class {name}:",
        f'    """The tools of {server}, one typed method each."""',
        "",
        "    def __init__(self, client: Client) -> None:",
        "        self.client = client",
        "",
        "    async def _call(self, name: str, arguments: dict[str, object]) -> CallToolResult:",
        "        result = await self.client.call_tool(name, _arguments(arguments))",
        "        if result.is_error is True:",
        "            raise ToolError(name, result)",
        "        return result",
    ]
    methods = method_names(t.name for t in tools)
    for tool in tools:
        input_name, output_name = models[tool.name]
        node = classes.get(input_name)
        params = _fields(node, code) if node is not None else None
        lines += ["", *_method(tool, methods[tool.name], params, output_name, taken)]
    return [*body, "", "", *lines]


def _assigned(node: ast.stmt) -> set[str]:
    targets: list[ast.expr] = [node.target] if isinstance(node, ast.AnnAssign) else []
    if isinstance(node, ast.Assign):
        targets = node.targets
    return {target.id for target in targets if isinstance(target, ast.Name)}


def _split(code: str) -> tuple[list[str], list[str]]:
    """The generator's module as (its imports, its definitions), the root alias dropped."""
    if not code:
        return [], []
    tree = ast.parse(code)
    imports: list[str] = []
    body: list[str] = []
    for node in tree.body:
        segment = ast.get_source_segment(code, node) or ""
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(segment)
        elif ROOT in _assigned(node):
            continue
        else:
            body += ["", "", segment]
    return imports, body


def _run_ruff(step: list[str], code: str, path: Path) -> str:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *step, "--stdin-filename", str(path), "-"],
            input=code,
            capture_output=True,
            text=True,
            check=False,
            cwd=path.parent if path.parent.is_dir() else None,
        )
    except OSError as exc:
        raise ConfigurationError(f"cannot run ruff ({exc}): {_INSTALL}") from None
    if done.returncode != 0:
        if "No module named ruff" in done.stderr:
            raise ConfigurationError(f"`mcpgen stubs` needs ruff: {_INSTALL}")
        raise ConfigurationError(f"ruff failed on the generated module: {done.stderr}")
    return done.stdout


def _ruff(code: str, path: Path) -> str:
    """`code` with its imports sorted and pruned, formatted, under the ruff
    configuration that applies to `path` (so the file passes the project's own ruff)."""
    code = _run_ruff(["format"], code, path)
    code = _run_ruff(["check", "--fix-only", "--exit-zero", "--select", _FIXES], code, path)
    code = _run_ruff(["format"], code, path)
    # The `noqa: E501` header stays only where that configuration checks line length and
    # a line is too long: RUF100 (on by default in recent ruff) reports it otherwise.
    said = _run_ruff(
        ["check", "--exit-zero", "--extend-select", "RUF100", "--output-format", "json"],
        code,
        path,
    )
    unused = any(
        found.get("code") == "RUF100" and found.get("location", {}).get("row") == 1
        for found in json.loads(said or "[]")
    )
    return code.partition("\n")[2] if unused and code.startswith(_NOQA) else code


def render(
    tools: Sequence[ToolSpec],
    server: Mapping[str, Any] | None,
    path: Path,
    class_name: str = "Tools",
) -> str:
    """The typed client module for `tools` of `server` (its serverInfo), to be written to
    `path` (whose ruff configuration formats it). Deterministic: the same tools give the
    same text, so `--check` compares it with a committed file."""
    if not class_name.isidentifier():
        raise ConfigurationError(f"the class name {class_name!r} is no Python identifier")
    who = "the server"
    if server:
        who = f"{server.get('name', '?')} {server.get('version', '')}".strip()
    schema, _ = combined_schema((t.name, t.input_schema, t.output_schema) for t in tools)
    code = _models(schema) if schema["$defs"] else ""
    imports, body = _split(code)
    header = [
        _NOQA,
        f'"""A typed client for the tools of {who}.',
        "",
        "Written by `mcpgen stubs`; regenerate it rather than edit it.",
        f"mcpgen {_version('mcpgen')}, datamodel-code-generator "
        f"{_version('datamodel-code-generator')}.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        *imports,
        _PRELUDE,
        *body,
        _HELPER_CODE,
    ]
    lines = _class(class_name, who, tools, header, code)
    return _ruff("\n".join(lines) + "\n", path)
