"""Match concrete URIs back to RFC 6570 URI templates (levels 1-3).

Supported expressions: `{var}`, `{+var}`, `{#var}` and, with several variables or the
level-3 operators, `{x,y}`, `{.x}`, `{/x}`, `{;x}`, `{?x,y}`, `{&x}`. Matched values are
percent-decoded. A value that could walk out of its place (a `..` segment, a NUL, a
backslash) makes the URI not match, so handlers never see a traversal attempt.
"""

from __future__ import annotations

import re

import msgspec

from mcpgen._errors import ConfigurationError

__all__ = ["UriTemplate"]

_EXPR = re.compile(r"\{([^{}]*)\}")
_VARNAME = re.compile(r"^[A-Za-z0-9_.%]+$")
# operator -> (regex for the whole expansion, separator between values)
_OPERATORS = {
    "": (r"([^/?#]*)", ","),
    "+": (r"(.*?)", ","),
    "#": (r"(?:#(.*))?", ","),
    ".": (r"((?:\.[^/?#.]*)*)", "."),
    "/": (r"((?:/[^/?#]*)*)", "/"),
    ";": (r"((?:;[^/?#;]*)*)", ";"),
    "?": (r"(?:\?([^#]*))?", "&"),
    "&": (r"((?:&[^#&]*)*)", "&"),
}


def _unquote(text: str) -> str:
    from urllib.parse import unquote  # noqa: PLC0415 (urllib.parse costs a stdio server ~3 ms)

    return unquote(text)


class _Expression(msgspec.Struct, frozen=True):
    operator: str
    names: tuple[str, ...]


class UriTemplate:
    def __init__(self, template: str) -> None:
        self.template = template
        pattern, pos = "^", 0
        self.expressions: list[_Expression] = []
        for m in _EXPR.finditer(template):
            pattern += re.escape(template[pos : m.start()])
            body = m.group(1)
            operator = body[:1] if body[:1] in _OPERATORS and body[:1] != "" else ""
            names = tuple(n.rstrip("*").split(":")[0] for n in body[len(operator) :].split(","))
            if not names or not all(_VARNAME.match(n) for n in names):
                raise ConfigurationError(
                    f"invalid expression {{{body}}} in URI template {template!r}"
                )
            self.expressions.append(_Expression(operator, names))
            pattern += _OPERATORS[operator][0]
            pos = m.end()
        if "{" in template[pos:] or "}" in template[pos:]:
            raise ConfigurationError(f"unbalanced braces in URI template {template!r}")
        pattern += re.escape(template[pos:]) + "$"
        self._regex = re.compile(pattern, re.S)
        self.variables = tuple(n for e in self.expressions for n in e.names)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables if `uri` is an expansion of this template, else None."""
        found = self._regex.match(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for expression, captured in zip(self.expressions, found.groups(), strict=True):
            if not _extract(expression, captured or "", values):
                return None
        for value in values.values():
            if not _safe(value):
                return None
        return values


def _extract(expression: _Expression, captured: str, out: dict[str, str]) -> bool:
    op, names = expression.operator, expression.names
    if op in ("?", "&", ";"):
        for part in re.split(r"[&;]", captured):
            key, _, value = part.partition("=")
            if key in names:
                out[key] = _unquote(value)
        # Query variables may be left out of an expansion; path parameters may not.
        return op in ("?", "&") or all(n in out for n in names)
    if op in (".", "/"):
        pieces = captured.split(op)[1:] if captured else []
    else:
        pieces = captured.split(",") if len(names) > 1 else [captured]
    if len(pieces) > len(names) or (len(pieces) < len(names) and op not in (".", "/", "#")):
        return False
    for name, piece in zip(names, pieces, strict=False):
        out[name] = _unquote(piece)
    return True


def _safe(value: str) -> bool:
    if "\x00" in value or "\\" in value:
        return False
    return ".." not in value.split("/")
