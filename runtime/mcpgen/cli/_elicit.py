"""Answering a server's elicitation from the command line.

On a terminal the user is asked: accept, decline or cancel, then (form mode) one
question per field of the requested schema, with its type, its default and, for enums,
the choices by number; an answer that breaks the field's bounds, length or format
(email, uri, date, date-time) is asked again. URL mode shows the URL to open.
Questions go to stderr so that stdout carries only the result. Without a terminal
nobody can answer: the request is declined and stderr says so (the tool then answers as
it does to a refusal).
"""

from __future__ import annotations

import asyncio
import math
import re
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import msgspec

from mcpgen.client._callbacks import ElicitationCallback
from mcpgen_types import latest as t

__all__ = ["answerer", "ask"]

Value = list[str] | str | int | float | bool
Action = Literal["accept", "decline", "cancel"]
_ACTIONS: dict[str, Action] = {"a": "accept", "d": "decline", "c": "cancel"}


class _NoMoreInputError(Exception):
    """stdin reached its end mid-question: the elicitation is cancelled."""


class _Prompter:
    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def line(self, question: str) -> str:
        self.out.write(question)
        self.out.flush()
        answer = self.stdin.readline()
        if not answer:
            raise _NoMoreInputError
        return answer.strip()

    def action(self, question: str) -> Action:
        while True:
            answer = self.line(f"{question} [a]ccept, [d]ecline or [c]ancel? [a] ").lower()
            chosen = _ACTIONS.get(answer[:1] or "a")
            if chosen is not None:
                return chosen
            self.say("  answer a, d or c")


def _choices(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(value, label) of an enum field (single or multi select), else None."""
    source = prop.get("items", prop) if prop.get("type") == "array" else prop
    if "enum" in source:
        names = source.get("enumNames") or source["enum"]
        return [(str(v), str(n)) for v, n in zip(source["enum"], names, strict=False)]
    options = source.get("oneOf") or source.get("anyOf")
    if options:
        return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options]
    return None


def _pick(answer: str, choices: list[tuple[str, str]]) -> str:
    for index, (value, label) in enumerate(choices, 1):
        if answer in (str(index), value, label):
            return value
    raise ValueError(f"{answer!r} is not one of the choices")


def _convert(answer: str, prop: dict[str, Any], choices: list[tuple[str, str]] | None) -> Value:
    kind = prop.get("type", "string")
    if kind == "array":
        picked = [a.strip() for a in answer.split(",") if a.strip()]
        fewest, most = prop.get("minItems", 0), prop.get("maxItems", len(picked))
        if not fewest <= len(picked) <= most:
            raise ValueError(f"choose {fewest} to {most}")
        return [_pick(a, choices) for a in picked] if choices else picked
    if choices:
        return _pick(answer, choices)
    if kind == "boolean":
        if answer.lower() in ("y", "yes", "true", "1"):
            return True
        if answer.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer y or n")
    if kind in ("integer", "number"):
        number = _number(answer, whole=kind == "integer")
        low, high = prop.get("minimum"), prop.get("maximum")
        if (low is not None and number < low) or (high is not None and number > high):
            raise ValueError(f"give a number {_bounds(prop)}")
        return number
    shortest, longest = prop.get("minLength", 0), prop.get("maxLength")
    if len(answer) < shortest or (longest is not None and len(answer) > longest):
        raise ValueError(
            f"give {shortest} to {longest if longest is not None else 'any'} characters"
        )
    check = _FORMATS.get(str(prop.get("format")))
    if check is not None and not check[0](answer):
        raise ValueError(check[1])
    return answer


def _number(answer: str, *, whole: bool) -> int | float:
    """A finite number (a whole one for an integer field: `4.0` and `1e2` are)."""
    try:
        number = float(answer)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or (whole and not number.is_integer()):
        raise ValueError("give a whole number" if whole else "give a number, such as 2.5")
    return int(number) if whole else number


def _bounds(prop: dict[str, Any]) -> str:
    """`from 1 to 100`, `from 0`, `up to 9`, or nothing: a number field's range."""
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f"from {low} to {high}"
    if low is not None:
        return f"from {low}"
    return "" if high is None else f"up to {high}"


def _is_email(text: str) -> bool:
    return _EMAIL.fullmatch(text) is not None


def _is_uri(text: str) -> bool:
    parts = urlsplit(text)
    return bool(_SCHEME.fullmatch(parts.scheme)) and bool(parts.netloc or parts.path)


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return _DATE.fullmatch(text) is not None


def _is_date_time(text: str) -> bool:
    if _DATE_TIME.fullmatch(text) is None:
        return False
    try:
        datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return False
    return True


_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
# The string formats an elicitation form may ask for: (check, what to say when it fails).
_FORMATS: dict[str, tuple[Callable[[str], bool], str]] = {
    "email": (_is_email, "give an email address, such as ada@example.com"),
    "uri": (_is_uri, "give a URI with its scheme, such as https://example.com/page"),
    "date": (_is_date, "give a date as YYYY-MM-DD, such as 2026-05-01"),
    "date-time": (
        _is_date_time,
        "give a date and time with its offset, such as 2026-05-01T09:30:00Z",
    ),
}


def _field(ask: _Prompter, name: str, prop: dict[str, Any], required: bool) -> Value | None:
    kind = str(prop.get("type", "string"))
    if prop.get("format"):
        kind += f", {prop['format']}"
    if kind.startswith("array"):
        kind = "several, comma-separated"
    elif kind == "boolean":
        kind = "y/n"
    elif kind in ("integer", "number") and _bounds(prop):
        kind += f", {_bounds(prop)}"
    title = prop.get("title") or name
    ask.say(f"{title} ({kind}{', required' if required else ''})")
    if prop.get("description"):
        ask.say(f"  {prop['description']}")
    choices = _choices(prop)
    for index, (value, label) in enumerate(choices or [], 1):
        ask.say(f"  {index}) {value}" + (f"  ({label})" if label != value else ""))
    default: Value | None = prop.get("default")
    shown = (
        ""
        if default is None
        else f" [{default if not isinstance(default, list) else ','.join(default)}]"
    )
    while True:
        answer = ask.line(f"  {name}{shown}: ")
        if not answer:
            if default is not None:
                return default
            if not required:
                return None
            ask.say("  an answer is required")
            continue
        try:
            return _convert(answer, prop, choices)
        except ValueError as exc:
            ask.say(f"  {exc}")


def ask(params: t.ElicitRequestParams, stdin: TextIO, out: TextIO) -> t.ElicitResult:
    """Ask the user on a terminal (blocking: run it in a thread)."""
    prompter = _Prompter(stdin, out)
    prompter.say(f"\nThe server asks: {params.message}")
    try:
        if params.url is not msgspec.UNSET:
            prompter.say(f"Open this URL: {params.url}")
            return t.ElicitResult(action=prompter.action("Once done:"))
        action = prompter.action("Answer?")
        if action != "accept":
            return t.ElicitResult(action=action)
        schema = params.requested_schema
        if schema is msgspec.UNSET:
            return t.ElicitResult(action="accept", content={})
        required = set(schema.required or ())
        content: dict[str, Value] = {}
        for name, prop in schema.properties.items():
            value = _field(prompter, name, prop, name in required)
            if value is not None:
                content[name] = value
        return t.ElicitResult(action="accept", content=content)
    except _NoMoreInputError:
        prompter.say("(no more input: cancelled)")
        return t.ElicitResult(action="cancel")


def _decline(params: t.ElicitRequestParams) -> t.ElicitResult:
    where = "" if params.url is msgspec.UNSET else f" (URL: {params.url})"
    sys.stderr.write(
        f"mcpgen: the server asked for input: {params.message!r}{where}; stdin is not a "
        "terminal, so nobody can answer and it was declined. Run the command in a "
        "terminal to answer it.\n"
    )
    return t.ElicitResult(action="decline")


def answerer() -> ElicitationCallback:
    """The elicitation callback for this process: ask on the terminal, else decline."""
    if not sys.stdin.isatty():
        return _decline

    async def on_terminal(params: t.ElicitRequestParams) -> t.ElicitResult:
        return await asyncio.to_thread(ask, params, sys.stdin, sys.stderr)

    return on_terminal
