"""Lists without what the caller may not use (`AuthSettings(hide_unauthorized=True)`).

A feature with `scopes=` is listed to a caller whose token grants all of them. The
core caches encoded list pages; a filtered page is cached under the scopes its caller
lacks, so callers with the same missing scopes share it (few variants in practice)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from mcpgen._errors import ConfigurationError
from mcpgen._server._call import Call

__all__ = ["scope_set", "visible"]


class _Entry(Protocol):
    @property
    def scopes(self) -> frozenset[str]: ...

    @property
    def definition(self) -> Any: ...


def visible(
    entries: Iterable[_Entry], call: Call, hide: bool
) -> tuple[list[Any], frozenset[str] | None]:
    """The definitions `call` may see, and the scopes it lacks (None: nothing hidden)."""
    if not hide or call.auth is None:
        return [entry.definition for entry in entries], None
    granted = call.auth.scopes
    kept = list(entries)
    lacking = frozenset().union(*(entry.scopes for entry in kept)) - granted
    if not lacking:
        return [entry.definition for entry in kept], None
    return [entry.definition for entry in kept if entry.scopes <= granted], lacking


def scope_set(value: Iterable[str] | None) -> frozenset[str]:
    """The `scopes=` of a feature as a set (a bare string is one mistake away from a set
    of its letters, so it is refused)."""
    if isinstance(value, str):
        raise ConfigurationError(f"scopes= takes a list of scope names, not {value!r}")
    return frozenset(value or ())
