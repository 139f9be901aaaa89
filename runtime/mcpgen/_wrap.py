"""Structured output that is not an object, in a revision that wants one.

From 2026-07-28 a tool's result may be any JSON value (a list, a number) with an output
schema to match. In 2025-06-18 and 2025-11-25 sessions `structuredContent` is an object
and `outputSchema` an object schema, so such a value travels as `{"result": value}` under
a wrapping schema marked `x-mcpgen-wrap-result` (FastMCP's own mark is honoured too).
mcpgen's client takes the wrapping off again, so what a tool returns and what its
schema says do not depend on the era.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["WRAP_MARK", "unwrap_schema", "wrap_schema", "wrapped"]

WRAP_MARK: Final = "x-mcpgen-wrap-result"
_MARKS: Final = (WRAP_MARK, "x-fastmcp-wrap-result")
_TOP_LEVEL: Final = ("$defs", "definitions", "$schema")  # kept at the document's root


def wrap_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The object schema of `{"result": value}` for a value of `schema`; its definitions
    stay at the root, where its references point."""
    inner = {k: v for k, v in schema.items() if k not in _TOP_LEVEL}
    outer: dict[str, Any] = {k: schema[k] for k in _TOP_LEVEL if k in schema}
    outer.update(
        {"type": "object", "properties": {"result": inner}, "required": ["result"], WRAP_MARK: True}
    )
    return outer


def wrapped(schema: object) -> bool:
    """Whether an output schema is a wrapping one (`wrap_schema`, or a peer SDK's)."""
    return isinstance(schema, dict) and any(schema.get(mark) is True for mark in _MARKS)


def unwrap_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of the wrapped value (its definitions back beside it)."""
    inner = dict((schema.get("properties") or {}).get("result") or {})
    inner.update({k: schema[k] for k in _TOP_LEVEL if k in schema})
    return inner
