"""Every struct of a generated module must be one msgspec can decode: the generator may
write a union msgspec refuses (two untagged structs, two str-like types, ...), which
would make every call of its tool raise. The module is imported once, at generation
time, its decoders built, and each field whose type has none falls back to `Any`.
`mcpgen openapi` checks its tools' parameter and result types the same way
(`undecodable`).
"""

from __future__ import annotations

import ast
import itertools
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import msgspec

from mcpgen._errors import ConfigurationError

__all__ = ["decodable", "undecodable"]

_K = TypeVar("_K")

_names = itertools.count()
_ROUNDS = 64  # each round loosens at least one field; a module has no more than this


def _decodes(tp: Any) -> bool:
    """msgspec builds a decoder and a JSON Schema for `tp`."""
    try:
        msgspec.json.Decoder(tp)
        msgspec.json.schema(tp)
    except Exception:  # msgspec says TypeError or ValueError; any refusal means untyped
        return False
    return True


def _mentions(tp: Any, classes: set[type]) -> bool:
    if isinstance(tp, type) and tp in classes:
        return True
    return any(_mentions(arg, classes) for arg in typing.get_args(tp))


@contextmanager
def _loaded(code: str) -> Iterator[types.ModuleType]:
    """`code` (the generator's own output) run as a throwaway module."""
    name = f"_mcpgen_decodable_check_{next(_names)}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(code, name, "exec"), module.__dict__)
        yield module
    finally:
        sys.modules.pop(name, None)


def _undecodable(code: str) -> set[tuple[str, str]]:
    """(class, field) pairs of the structs in `code` whose field types msgspec refuses:
    those that fail of themselves first, the ones failing only through them after."""
    with _loaded(code) as module:
        structs = {
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, msgspec.Struct)
            and value.__module__ == module.__name__
        }
        failing = {cls for cls in structs if not _decodes(cls)}
        bad: dict[tuple[str, str], bool] = {}
        for cls in failing:
            for field in msgspec.structs.fields(cls):
                if not _decodes(field.type):
                    bad[cls.__name__, field.name] = _mentions(field.type, failing)
    of_themselves = {pair for pair, through in bad.items() if not through}
    return of_themselves or set(bad)


def undecodable(code: str, annotations: Mapping[_K, str]) -> set[_K]:
    """The keys of `annotations` (type expressions over the names `code` defines) that
    msgspec cannot decode: `A | B` of two untagged structs, a `Literal` of mixed values."""
    refused: set[_K] = set()
    with _loaded(code) as module:
        for key, annotation in annotations.items():
            try:
                tp = eval(annotation, module.__dict__)  # a type expression we wrote
            except Exception:  # an annotation that does not even evaluate has no decoder
                refused.add(key)
                continue
            if not _decodes(tp):
                refused.add(key)
    return refused


def _loosen(code: str, bad: set[tuple[str, str]]) -> str:
    tree = ast.parse(code)
    spans: list[tuple[int, int, int, int]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if (
                isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and (node.name, item.target.id) in bad
            ):
                a = item.annotation
                spans.append(
                    (a.lineno, a.col_offset, a.end_lineno or a.lineno, a.end_col_offset or 0)
                )
    lines = code.splitlines(keepends=True)
    for start, col, end, end_col in sorted(spans, reverse=True):
        head, tail = lines[start - 1][:col], lines[end - 1][end_col:]
        lines[start - 1 : end] = [head + "Any" + tail]
    return "".join(lines)


def decodable(code: str, source: str = "the tool schemas") -> str:
    """`code` (the generator's module) with every field msgspec cannot decode typed `Any`;
    `source` names what the models came from when even that does not help."""
    if not code:
        return code
    if "from typing import Any\n" not in code:
        code = code.replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\nfrom typing import Any\n",
            1,
        )
    for _ in range(_ROUNDS):
        bad = _undecodable(code)
        if not bad:
            return code
        code = _loosen(code, bad)
    raise ConfigurationError(f"{source} give types msgspec cannot decode")
