"""Versions, eras and the per-request protocol rules, as data the core iterates.

Owns: which revisions are modern or legacy (from the generated tables), which methods
each era serves, `_meta` validation for modern requests, RFC 5424 log-level order,
the mirrored HTTP header rules, which HTTP status each failure maps to, and the
legacy dialect (downgrading modern results for older revisions). Knows no tool,
resource or prompt, and performs no I/O.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import re
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any, Final

import msgspec
from msgspec import UNSET

import mcpgen_types
from mcpgen._errors import McpError
from mcpgen._wrap import wrap_schema
from mcpgen_types import latest as modern

_encode = msgspec.json.Encoder().encode

__all__ = [
    "INVALID_PARAMS",
    "LATEST",
    "LEGACY",
    "LOG_LEVELS",
    "META_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROGRESS",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "META_VERSION",
    "METHOD_NOT_FOUND",
    "NAME_PARAM",
    "RESEND_ONCE",
    "SSE_FALLBACK_STATUSES",
    "SUPPORTED",
    "MetaError",
    "common_modern",
    "decode_header_value",
    "encode_header_value",
    "header_mismatch",
    "legacy_methods",
    "legacy_module",
    "mcp_header_params",
    "missing_capability",
    "sessionless",
    "validate_meta",
]

# -- versions ------------------------------------------------------------------------------
LATEST: Final = mcpgen_types.LATEST
LEGACY: Final = mcpgen_types.LEGACY
MODERN: Final = tuple(
    sorted((v for v, r in mcpgen_types.ROLES.items() if r == "modern"), reverse=True)
)
# Advertised in server/discover and in -32022 data: modern first, then legacy newest first.
SUPPORTED: Final = (*MODERN, *sorted(LEGACY, reverse=True))

_MODULES: dict[str, ModuleType] = {}


def legacy_module(version: str) -> ModuleType:
    module = _MODULES.get(version)
    if module is None:
        module = _MODULES[version] = importlib.import_module(mcpgen_types.MODULES[version])
    return module


def legacy_methods(version: str) -> Mapping[str, Any]:
    methods: Mapping[str, Any] = legacy_module(version).METHODS
    return methods


# -- error codes and _meta keys (from the generated module of the newest revision) ----------
METHOD_NOT_FOUND: Final = modern.METHOD_NOT_FOUND
INVALID_PARAMS: Final = modern.INVALID_PARAMS
HEADER_MISMATCH: Final = modern.HEADER_MISMATCH
MISSING_CAPABILITY: Final = modern.MISSING_REQUIRED_CLIENT_CAPABILITY
UNSUPPORTED_VERSION: Final = modern.UNSUPPORTED_PROTOCOL_VERSION
META_VERSION: Final = modern.META_PROTOCOL_VERSION
META_CAPABILITIES: Final = modern.META_CLIENT_CAPABILITIES
META_CLIENT_INFO: Final = modern.META_CLIENT_INFO
META_LOG_LEVEL: Final = modern.META_LOG_LEVEL
META_PROGRESS: Final = modern.META_PROGRESS_TOKEN
META_SERVER_INFO: Final = modern.META_SERVER_INFO
META_SUBSCRIPTION_ID: Final = modern.META_SUBSCRIPTION_ID

# RFC 5424 severity, least severe first (the schema lists the names alphabetically).
LOG_LEVELS: Final[dict[str, int]] = {
    name: rank
    for rank, name in enumerate(
        ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    )
}

# HTTP status for errors whose cause is the protocol layer (2026-07-28 transports page);
# other errors (unknown tool, handler failures) travel with 200 and a JSON-RPC body.
STATUS_BAD_REQUEST: Final = 400
STATUS_NOT_FOUND: Final = 404


class MetaError(McpError):
    """A modern request failed `_meta`/header/version/capability checks (HTTP 400)."""


def validate_meta(
    meta: Any, headers: Mapping[str, str] | None, method: str
) -> tuple[str, dict[str, Any], str | None]:
    """Check a modern request's `_meta` (and, over HTTP, its mirrored version and method
    headers) in the order the 2026-07-28 rules imply: required keys (-32602), header
    equals `_meta` (-32020), version supported (-32022), `Mcp-Method` (-32020).
    Returns (version, client capabilities, log level)."""
    if type(meta) is not dict:
        raise MetaError(INVALID_PARAMS, "params._meta must be an object")
    version = meta.get(META_VERSION)
    if type(version) is not str:
        raise MetaError(INVALID_PARAMS, f"params._meta[{META_VERSION!r}] must be a string")
    caps = meta.get(META_CAPABILITIES)
    if type(caps) is not dict:
        raise MetaError(
            INVALID_PARAMS,
            f"params._meta[{META_CAPABILITIES!r}] is required (an object; {{}} for none)",
        )
    probe = method == "server/discover"  # the era probe may come without mirrored headers
    if headers is not None:
        header = headers.get("mcp-protocol-version")
        if header is None and not probe:
            raise header_mismatch("the MCP-Protocol-Version header is required")
        if header is not None and header.strip() != version:
            raise header_mismatch("the MCP-Protocol-Version header does not match params._meta")
    if version not in MODERN:
        raise MetaError(
            UNSUPPORTED_VERSION,
            f"protocol version {version!r} is not supported",
            {"supported": list(SUPPORTED), "requested": version},
        )
    level = meta.get(META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise MetaError(
            INVALID_PARAMS, f"unknown log level {level!r}; expected one of {list(LOG_LEVELS)}"
        )
    if headers is not None:
        declared = headers.get("mcp-method")
        if declared is None:
            if not probe:
                raise header_mismatch("the Mcp-Method header is required")
        elif declared.strip() != method:
            raise header_mismatch(
                f"the Mcp-Method header {declared!r} does not match the body's {method!r}"
            )
    return version, caps, level


def missing_capability(required: dict[str, Any], message: str) -> MetaError:
    return MetaError(MISSING_CAPABILITY, message, {"requiredCapabilities": required})


# -- mirrored HTTP headers -----------------------------------------------------------------
# Which params field `Mcp-Name` mirrors, per method (2026-07-28 transports page; the Tasks
# extension adds its task id).
NAME_PARAM: Final[dict[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_SENTINEL_HEAD, _SENTINEL_TAIL = "=?base64?", "?="


def decode_header_value(value: str) -> str:
    """Undo the `=?base64?...?=` wrapping of header values; strict Base64."""
    value = value.strip(" \t")
    if value.startswith(_SENTINEL_HEAD) and value.endswith(_SENTINEL_TAIL) and len(value) >= 11:
        payload = value[len(_SENTINEL_HEAD) : -len(_SENTINEL_TAIL)]
        try:
            return base64.b64decode(payload, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise header_mismatch(f"header value {value!r} is not valid Base64") from None
    return value


def header_mismatch(message: str) -> MetaError:
    return MetaError(HEADER_MISMATCH, message)


def header_text(value: Any) -> str | None:
    """How a body value must look in a header: strings as-is, integers in decimal,
    booleans as true/false; None when the value cannot be mirrored."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def same_header_value(header: str, body: Any) -> bool:
    expected = header_text(body)
    if expected is None:
        return False
    if isinstance(body, int | float) and not isinstance(body, bool):
        try:
            return float(header) == float(body)  # 42.0 == 42
        except ValueError:
            return False
    return header == expected


_TCHAR = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HEADER_TYPES = ("string", "integer", "boolean")


def mcp_header_params(schema: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Validate a tool's `x-mcp-header` annotations; map lower-case header name to
    (property, JSON type). Raises ValueError naming the problem.

    Allowed only on root properties (reached purely through `properties`) of type
    string, integer or boolean, with a non-empty RFC 9110 token as value, unique
    case-insensitively within the schema (2026-07-28 transports page).
    """
    out: dict[str, tuple[str, str]] = {}
    props = schema.get("properties") or {}
    for prop, sub in props.items():
        if not isinstance(sub, dict) or "x-mcp-header" not in sub:
            continue
        name = sub["x-mcp-header"]
        if not isinstance(name, str) or not _TCHAR.match(name):
            raise ValueError(f"property {prop!r}: x-mcp-header {name!r} is not an HTTP token")
        if sub.get("type") not in _HEADER_TYPES:
            raise ValueError(f"property {prop!r}: x-mcp-header needs type string, integer, boolean")
        if name.lower() in out:
            raise ValueError(f"property {prop!r}: x-mcp-header {name!r} is used twice")
        out[name.lower()] = (prop, sub["type"])
    for path, node in _walk(schema, ""):
        at_root = path.count("/") == 2 and path.startswith("/properties/")
        if "x-mcp-header" in node and not at_root:
            raise ValueError(f"x-mcp-header at {path or '/'} is not on a root property")
    return out


def _walk(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in ("const", "enum", "default", "examples"):
                continue
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}/{i}")


def encode_header_value(value: Any) -> str | None:
    """A body value as a client writes it in `Mcp-Name`/`Mcp-Param-*`: strings as-is
    when plain header-safe ASCII, else `=?base64?...?=`; integers in decimal; booleans
    true/false. None for values that are not mirrored."""
    text = header_text(value)
    if text is None:
        return None
    if isinstance(value, str) and (
        not text.isascii()
        or text != text.strip(" \t")
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)
        or (text.startswith(_SENTINEL_HEAD) and text.endswith(_SENTINEL_TAIL))
    ):
        return _SENTINEL_HEAD + base64.b64encode(text.encode()).decode() + _SENTINEL_TAIL
    return text


# -- client-side version and retry rules ---------------------------------------------------
def common_modern(supported: object) -> str | None:
    """The newest modern revision in the peer's `supported` list (a discover result's
    versions, or the data of an unsupported-version error), or None: the lifecycle page
    has the client pick a version both sides support."""
    if not isinstance(supported, list | tuple | frozenset | set):
        return None
    return next((version for version in MODERN if version in supported), None)


# The errors after which a modern client sends the same request once more (once per call):
# code -> (the methods it applies to, what to do first). A -32020 on tools/call may mean
# our view of the tool's `x-mcp-header` annotations is stale: re-read the tool list
# (2026-07-28 transports page); a -32022 names the versions the server speaks: switch.
RESEND_ONCE: Final[dict[int, tuple[frozenset[str] | None, str]]] = {
    HEADER_MISMATCH: (frozenset({"tools/call"}), "refresh_tools"),
    UNSUPPORTED_VERSION: (None, "switch_version"),
}

# An `initialize` POST refused with one of these and no JSON-RPC answer to it found no
# Streamable HTTP endpoint: the older HTTP+SSE transport may serve that URL (2025-03-26
# transports page, backwards compatibility).
SSE_FALLBACK_STATUSES: Final = frozenset({400, 404, 405})


# -- the legacy dialect --------------------------------------------------------------------
_MODERN_ONLY_RESULT_KEYS: Final = ("resultType", "ttlMs", "cacheScope")


def downgrade(version: str, method: str, result: Any) -> Any:
    """A modern result as the legacy revision `version` writes it.

    Modern-only keys go (`resultType`, cache hints, the serverInfo stamp); content
    blocks the revision does not know become text; `structuredContent` that is not an
    object and a tool's `outputSchema` that is not an object schema are wrapped
    (`_wrap`) where the revision has structured output and dropped before it; then the
    value is converted through
    the revision's own generated result type, which drops every field it lacks.
    """
    module = legacy_module(version)
    info = module.METHODS.get(method)
    if method == "tools/call" and info is not None and info.result is not None:
        # The hot path, in one pass: the revision's own result type reads the modern
        # JSON and drops what it lacks. Anything it cannot read (a content block or
        # structured content the revision does not know) takes the general path below.
        try:
            legacy = _decoder(info.result).decode(_encode(result))
        except msgspec.ValidationError:
            pass
        else:
            meta = legacy.meta
            if type(meta) is dict and META_SERVER_INFO in meta:
                meta = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
                legacy.meta = meta or UNSET
            return legacy
    data = msgspec.to_builtins(result)
    if isinstance(data, dict):
        for key in _MODERN_ONLY_RESULT_KEYS:
            data.pop(key, None)
        meta = data.get("_meta")
        if isinstance(meta, dict):
            meta.pop(META_SERVER_INFO, None)
            if not meta:
                del data["_meta"]
        _downgrade_content(module, data)
        structured_era = hasattr(module, "ResourceLink")  # 2025-06-18 and later
        for tool in data.get("tools", ()):  # before 2026-07-28: an object schema
            schema = tool.get("outputSchema") if isinstance(tool, dict) else None
            if schema is None or (isinstance(schema, dict) and schema.get("type") == "object"):
                continue
            if isinstance(schema, dict) and structured_era:
                tool["outputSchema"] = wrap_schema(schema)
            else:
                del tool["outputSchema"]
        structured = data.pop("structuredContent", UNSET)
        if structured is not UNSET and structured_era:
            wrap = not isinstance(structured, dict)
            data["structuredContent"] = {"result": structured} if wrap else structured
    if info is None or info.result is None:
        return data
    return msgspec.convert(data, info.result)


@functools.cache
def _decoder(result_type: type) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(result_type)


@functools.cache
def _known_blocks(module: ModuleType) -> frozenset[str]:
    known = {"text", "image", "resource"}
    if hasattr(module, "AudioContent"):
        known.add("audio")
    if hasattr(module, "ResourceLink"):
        known.add("resource_link")
    return frozenset(known)


def _downgrade_content(module: ModuleType, data: dict[str, Any]) -> None:
    known = _known_blocks(module)
    for key in ("content", "messages"):
        items = data.get(key)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            holder, block = (item, item.get("content")) if key == "messages" else (None, item)
            if isinstance(block, dict) and block.get("type") not in known:
                text = _describe(block)
                if holder is not None:
                    holder["content"] = text
                else:
                    items[i] = text


def _describe(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "resource_link":
        label = block.get("title") or block.get("name") or block.get("uri")
        return {"type": "text", "text": f"[resource: {label} <{block.get('uri')}>]"}
    if kind == "audio":
        return {
            "type": "text",
            "text": f"[audio ({block.get('mimeType', 'unknown type')}) omitted]",
        }
    return {"type": "text", "text": f"[{kind} content omitted]"}


# -- transport rules by revision ---------------------------------------------------------------
# Legacy revisions whose Streamable HTTP event streams carry SSE event ids, opened by a
# priming event, so that a client can resume with Last-Event-ID (added in 2025-11-25).
SSE_EVENT_IDS: Final = frozenset({"2025-11-25"})


def sse_event_ids(legacy_version: str | None) -> bool:
    """Whether a legacy session of `legacy_version` (None: no session) numbers its SSE
    events; modern requests' streams are not resumable."""
    return legacy_version in SSE_EVENT_IDS


class _ParamsOnly(msgspec.Struct, gc=False):
    params: Any = None


def sessionless(headers: Mapping[str, str], body: bytes | None = None) -> bool:
    """Whether an HTTP request is of the modern era, which has no sessions, so that an
    `Mcp-Session-Id` on it (a stale one, say) means nothing: its MCP-Protocol-Version
    header names a modern revision, or (`body` given: asked only when no session has
    that id) its `_meta` carries a protocol version."""
    if headers.get("mcp-protocol-version") in MODERN:
        return True
    try:
        params = None if body is None else msgspec.json.decode(body, type=_ParamsOnly).params
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return False  # not one request object: left to the session rules
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and META_VERSION in meta


# Revisions whose sessions take JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18).
JSON_RPC_BATCHES: Final = frozenset({"2025-03-26"})

# Legacy revisions whose clients can be sent a URL-mode elicitation (added in 2025-11-25).
URL_ELICITATION: Final = frozenset({"2025-11-25"})
