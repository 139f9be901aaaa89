"""Reading an OpenAPI document into the operations a module is written from.

Loads JSON or YAML (a file or an http(s) URL), refuses Swagger 2.0, turns OpenAPI 3.0's
`nullable` into a `null` member, gathers every schema the module needs into one JSON
Schema document (`#/$defs`) for the model generator, and selects the operations
(`--include`/`--exclude`). An operation it cannot express is refused with the reason
and its name; the rest of the document is still written.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgen._errors import ConfigurationError

__all__ = ["Document", "Op", "Param", "load", "read_document", "snake"]

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# Names the written module uses itself: a model of the same name gets a suffix.
RESERVED = frozenset(
    {"Any", "Literal", "Annotated", "Api", "ApiAuth", "Context", "Meta", "Operation",
     "Scheme", "Server", "Struct", "ToolAnnotations", "UNSET", "UnsetType", "Enum",
     "StrEnum", "IntEnum", "TypeAlias", "datetime", "date", "time", "timedelta", "UUID"}
)  # fmt: skip
# components' schemas, and the document-level `$defs` some 3.1 documents keep beside them
_REF = re.compile(r"^#/(?:components/schemas|\$defs)/(.+)$")


@dataclass
class Param:
    name: str  # on the wire
    python: str  # the tool's argument
    location: str  # path | query | header | body
    schema: dict[str, Any]
    required: bool
    description: str = ""


@dataclass
class Op:
    operation_id: str
    tool: str
    method: str
    path: str
    summary: str
    tags: tuple[str, ...]
    params: list[Param] = field(default_factory=list)
    body: str | None = None  # json | form
    ok: tuple[int, ...] = (200,)
    response: dict[str, Any] | None = None  # the success body's schema
    security: tuple[tuple[str, ...], ...] = ()
    resource: str | None = None  # a GET served as a resource (template): its URI


@dataclass
class Document:
    title: str
    version: str
    source: str
    sha256: str
    servers: list[str]
    defs: dict[str, Any]  # components.schemas (and inline ones), renamed to class names
    names: dict[str, str]  # component name -> class name
    schemes: dict[str, dict[str, Any]]
    ops: list[Op]
    refused: list[str]


def read_document(source: str) -> tuple[dict[str, Any], bytes]:
    """The document at `source` (a path or an http(s) URL) and its raw bytes."""
    if source.startswith(("http://", "https://")):
        import httpx  # noqa: PLC0415 (only for a URL)

        try:
            response = httpx.get(source, timeout=60, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise ConfigurationError(f"cannot fetch {source}: {exc}") from None
        raw = response.content
    else:
        path = Path(source)
        if not path.is_file():
            raise ConfigurationError(f"no OpenAPI document at {source}")
        raw = path.read_bytes()
    try:
        doc = json.loads(raw)
    except ValueError:
        yaml: Any = importlib.import_module("yaml")  # YAML only; PyYAML comes with the extra

        try:
            doc = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{source} is neither JSON nor YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise ConfigurationError(f"{source} is not an OpenAPI document (no object at the top)")
    return doc, raw


def snake(text: str) -> str:
    """`getItemById` -> `get_item_by_id`, `List pets` -> `list_pets`."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").lower()
    if not text:
        text = "x"
    return "_" + text if text[0].isdigit() else text


def _pascal(text: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", text)
    out = "".join(w[:1].upper() + w[1:] for w in words if w)
    out = out or "Model"
    return "M" + out if out[0].isdigit() else out


def _python_name(text: str, taken: set[str]) -> str:
    import keyword  # noqa: PLC0415

    name = snake(text)
    if keyword.iskeyword(name) or name in ("ctx", "self"):
        name += "_"
    base, n = name, 2
    while name in taken:
        name = f"{base}_{n}"
        n += 1
    taken.add(name)
    return name


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0 `nullable: true` as JSON Schema says it; `#/components/schemas/X`
    references as `#/$defs/<class>`."""
    if isinstance(node, list):
        return [_nullable(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items() if k not in ("nullable", "example", "xml")}
    if node.get("nullable") is True:
        return {"anyOf": [out, {"type": "null"}]}
    return out


def _retarget(node: Any, names: Mapping[str, str]) -> Any:
    if isinstance(node, list):
        return [_retarget(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _retarget(v, names) for k, v in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str):
        found = _REF.match(ref)
        if found is None or found.group(1) not in names:
            raise ConfigurationError(
                f"unsupported reference {ref!r} (only #/components/schemas/...)"
            )
        out["$ref"] = f"#/$defs/{names[found.group(1)]}"
    discriminator = out.get("discriminator")
    if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
        mapping = {k: _mapped(v, names) for k, v in discriminator["mapping"].items()}
        out["discriminator"] = {**discriminator, "mapping": mapping}
    return out


def _mapped(target: Any, names: Mapping[str, str]) -> Any:
    """A discriminator mapping's target (a reference, or a bare schema name) as the
    `#/$defs/` reference the variant is written under: left as it was, the model
    generator would tag the variant with its class name instead of the mapping's key."""
    found = _REF.match(target) if isinstance(target, str) else None
    name = found.group(1) if found is not None else target
    return f"#/$defs/{names[name]}" if isinstance(name, str) and name in names else target


def _resolve(doc: Mapping[str, Any], node: Any) -> Any:
    """A `#/components/...` reference (to a parameter, body or response) replaced."""
    seen = 0
    while (
        isinstance(node, dict)
        and "$ref" in node
        and not str(node["$ref"]).startswith("#/components/schemas/")
    ):
        seen += 1
        ref = str(node["$ref"])
        if not ref.startswith("#/") or seen > 20:
            raise ConfigurationError(f"unsupported reference {ref!r}")
        target: Any = doc
        for part in ref[2:].split("/"):
            target = (
                target.get(part.replace("~1", "/").replace("~0", "~"))
                if isinstance(target, dict)
                else None
            )
        if target is None:
            raise ConfigurationError(f"dangling reference {ref!r}")
        node = target
    return node


def _selected(op: Op, include: Sequence[str], exclude: Sequence[str]) -> bool:
    def matches(rule: str) -> bool:
        kind, _, value = rule.partition(":")
        if not value:
            kind, value = "", rule
        found = {
            "tag": any(fnmatch.fnmatchcase(t, value) for t in op.tags),
            "op": fnmatch.fnmatchcase(op.operation_id, value),
            "path": fnmatch.fnmatchcase(op.path, value),
        }
        return found[kind] if kind in found else any(found.values())

    if include and not any(matches(rule) for rule in include):
        return False
    return not any(matches(rule) for rule in exclude)


def load(
    source: str,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    name_style: str = "snake",
    resources: Iterable[str] = (),
) -> Document:
    doc, raw = read_document(source)
    if "swagger" in doc:
        raise ConfigurationError(
            f"{source} is Swagger {doc.get('swagger')}: convert it to OpenAPI 3 first "
            "(for example with swagger2openapi); mcpgen reads OpenAPI 3.0 and 3.1"
        )
    version = str(doc.get("openapi", ""))
    if not version.startswith("3."):
        raise ConfigurationError(f"{source}: no `openapi: 3.x` field (found {version or 'none'})")
    info = doc.get("info") or {}
    root_defs = doc.get("$defs")
    components: dict[str, Any] = dict(root_defs) if isinstance(root_defs, dict) else {}
    components.update((doc.get("components") or {}).get("schemas") or {})
    names: dict[str, str] = {}
    taken: set[str] = set(RESERVED)
    for component in components:
        name, n = _pascal(component), 2
        while name in taken:
            name = f"{_pascal(component)}{n}"
            n += 1
        taken.add(name)
        names[component] = name
    defs = {names[k]: _retarget(_nullable(v), names) for k, v in components.items()}
    out = Document(
        title=str(info.get("title", "API")),
        version=str(info.get("version", "")),
        source=source,
        sha256=hashlib.sha256(raw).hexdigest(),
        servers=[str(s.get("url", "")) for s in doc.get("servers") or [] if isinstance(s, dict)],
        defs=defs,
        names=names,
        schemes=dict((doc.get("components") or {}).get("securitySchemes") or {}),
        ops=[],
        refused=[],
    )
    tools: set[str] = set()
    rules_in, rules_out, resource_rules = list(include), list(exclude), list(resources)
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, dict):
                continue
            op_id = str(operation.get("operationId") or f"{method}_{path}")
            try:
                op = _operation(doc, out, path, method, op_id, operation, shared, taken, name_style)
            except (RefusedError, ConfigurationError) as exc:
                out.refused.append(f"{op_id} ({method.upper()} {path}): {exc}")
                continue
            if not _selected(op, rules_in, rules_out):
                continue
            if resource_rules and _selected(op, resource_rules, ()):
                try:
                    op.resource = _resource_uri(out.title, op)
                except RefusedError as exc:
                    out.refused.append(f"{op_id} as a resource: {exc} (kept as a tool)")
            op.tool = _python_name(op.tool, tools)
            out.ops.append(op)
    out.defs = _reachable(out)
    return out


def _resource_uri(title: str, op: Op) -> str:
    """The URI (template) a GET operation is read at: `api-name://` and its path, its
    path parameters the template's variables (RFC 6570 level 1)."""
    if op.method != "GET":
        raise RefusedError(f"only GET operations can be resources, not {op.method}")
    required = [p.name for p in op.params if p.required and p.location != "path"]
    if required:
        raise RefusedError(f"it needs {', '.join(required)} beside its path")
    scheme = re.sub(r"[^a-z0-9+.-]+", "-", title.lower()).strip("-") or "api"
    if not scheme[0].isalpha():
        scheme = "api-" + scheme
    return f"{scheme}://{op.path.lstrip('/')}"


def _reachable(doc: Document) -> dict[str, Any]:
    """Only the definitions the selected operations use, directly or through others (a
    document of a thousand operations written for one tag models only that tag's)."""
    todo: list[Any] = [p.schema for op in doc.ops for p in op.params]
    todo += [op.response for op in doc.ops if op.response is not None]
    kept: dict[str, Any] = {}
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.rsplit("/", 1)[1]
                if name not in kept and name in doc.defs:
                    kept[name] = doc.defs[name]
                    todo.append(doc.defs[name])
            todo.extend(node.values())
    return {name: kept[name] for name in doc.defs if name in kept}


class RefusedError(Exception):
    pass


def _operation(
    doc: Mapping[str, Any],
    out: Document,
    path: str,
    method: str,
    op_id: str,
    operation: Mapping[str, Any],
    shared: Sequence[Any],
    taken: set[str],
    name_style: str,
) -> Op:
    tool = snake(op_id) if name_style == "snake" else re.sub(r"[^0-9A-Za-z_]", "_", op_id)
    said = [str(operation.get(k) or "").strip() for k in ("summary", "description")]
    summary = "\n\n".join(dict.fromkeys(text for text in said if text))
    security = operation.get("security", doc.get("security")) or []
    op = Op(
        operation_id=op_id,
        tool=tool,
        method=method.upper(),
        path=path,
        summary=summary,
        tags=tuple(str(t) for t in operation.get("tags") or ()),
        security=tuple(tuple(sorted(req)) for req in security if isinstance(req, dict)),
    )
    args: set[str] = set()
    params: dict[tuple[str, str], Any] = {}
    for raw in [*shared, *(operation.get("parameters") or [])]:
        param = _resolve(doc, raw)
        params[(str(param.get("in")), str(param.get("name")))] = param  # the operation's win
    for (where, name), param in params.items():
        if where == "cookie":
            raise RefusedError(f"cookie parameter {name!r} is not supported")
        if where not in ("path", "query", "header"):
            raise RefusedError(f"parameter {name!r} is in {where!r}")
        schema = param.get("schema")
        if schema is None:
            raise RefusedError(f"parameter {name!r} has no schema (content-typed parameters)")
        op.params.append(
            Param(
                name=name,
                python=_python_name(name, args),
                location=where,
                schema=_retarget(_nullable(schema), out.names),
                required=bool(param.get("required")) or where == "path",
                description=str(param.get("description") or "").strip(),
            )
        )
    body = _resolve(doc, operation.get("requestBody")) if operation.get("requestBody") else None
    if body is not None:
        content = body.get("content") or {}
        kind = next((k for k in content if "json" in k), None)
        encoding = "json"
        if kind is None and "application/x-www-form-urlencoded" in content:
            kind, encoding = "application/x-www-form-urlencoded", "form"
        if kind is None:
            kinds = ", ".join(content) or "none"
            raise RefusedError(
                f"request body of type {kinds} (file uploads and non-JSON bodies are refused)"
            )
        schema = (content[kind] or {}).get("schema") or {}
        name = _def_name(out, taken, f"{_pascal(op_id)}Body", schema)
        op.params.append(
            Param(
                "body",
                _python_name("body", args),
                "body",
                {"$ref": f"#/$defs/{name}"},
                bool(body.get("required")),
                str(body.get("description") or "").strip(),
            )
        )
        op.body = encoding
    op.ok, op.response = _success(doc, out, taken, op_id, operation.get("responses") or {})
    return op


def _def_name(out: Document, taken: set[str], wanted: str, schema: Any) -> str:
    """`schema` as a definition of its own (a reference stays a reference)."""
    schema = _retarget(_nullable(schema), out.names)
    if isinstance(schema, dict) and set(schema) == {"$ref"}:
        return str(schema["$ref"]).rsplit("/", 1)[1]
    name, n = wanted, 2
    while name in taken:
        name = f"{wanted}{n}"
        n += 1
    taken.add(name)
    out.defs[name] = schema
    return name


def _success(
    doc: Mapping[str, Any], out: Document, taken: set[str], op_id: str, responses: Mapping[str, Any]
) -> tuple[tuple[int, ...], dict[str, Any] | None]:
    codes = sorted(int(c) for c in responses if str(c).isdigit() and 200 <= int(c) < 300)
    if not codes and "2XX" in responses:
        codes = [200]
    if not codes:
        return (200,), None
    first = _resolve(doc, responses.get(str(codes[0])) or responses.get("2XX") or {})
    content = first.get("content") or {}
    kind = next((k for k in content if "json" in k), None)
    if kind is None:
        return tuple(codes), {"type": "string"} if content else None
    schema = (content[kind] or {}).get("schema")
    if schema is None:
        return tuple(codes), {}
    if isinstance(schema, dict) and (schema.get("type") == "object" or "properties" in schema):
        name = _def_name(out, taken, f"{_pascal(op_id)}Response", schema)  # retargets it
        return tuple(codes), {"$ref": f"#/$defs/{name}"}
    return tuple(codes), _retarget(_nullable(schema), out.names)
