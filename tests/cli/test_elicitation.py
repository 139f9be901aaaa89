"""`mcpgen call` answers a server's elicitation: on a terminal the user is asked (driven
here through a pseudo-terminal), without one it is declined with a message."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from mcpgen.cli._elicit import ask
from mcpgen.types import ElicitRequestParams
from tests.conftest import REPO

EVERYTHING = [sys.executable, str(REPO / "examples" / "everything.py")]
MCPGEN = [sys.executable, "-m", "mcpgen"]


class Terminal:
    """A command on a pseudo-terminal: wait for text, type lines."""

    def __init__(self, argv: list[str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=REPO)
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r}; output so far:\n{self.seen}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the command ended and the terminal closed
                    chunk = b""
                if not chunk:
                    assert text in self.seen, f"ended without {text!r}:\n{self.seen}"
                self.seen += chunk.decode(errors="replace").replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> int:
        code = self.proc.wait(timeout=30)
        os.close(self.master)
        return code


@pytest.mark.parametrize("era", ["modern", pytest.param("legacy", marks=pytest.mark.slow)])
def test_a_terminal_user_fills_the_form(era: str) -> None:
    """Modern: an input round; legacy: a server-to-client request. Same questions."""
    term = Terminal(
        [
            *MCPGEN,
            "call",
            "test_elicitation",
            '{"message": "Who are you?"}',
            "--era",
            era,
            "--",
            *EVERYTHING,
        ]
    )
    term.expect("The server asks: Who are you?")
    term.expect("[a]ccept, [d]ecline or [c]ancel? [a] ")
    term.type("")  # accept is the default
    term.expect("username (string, required)")
    term.expect("  User's response")
    term.type("")  # required: asked again
    term.expect("an answer is required")
    term.type("ada")
    term.expect("email (string, required)")
    term.type("ada@example.org")
    term.expect('content={"username": "ada", "email": "ada@example.org"}')
    assert term.finish() == 0
    assert "User response: action=accept" in term.seen


@pytest.mark.slow
def test_a_terminal_user_declines() -> None:
    term = Terminal([*MCPGEN, "call", "test_streaming_elicitation", "--", *EVERYTHING])
    term.expect("The server asks: Continue?")
    term.expect("[c]ancel?")
    term.type("d")
    term.expect("Streaming elicitation: decline")
    assert term.finish() == 0


def test_without_a_terminal_it_is_declined_with_a_message() -> None:
    proc = subprocess.run(
        [*MCPGEN, "call", "test_streaming_elicitation", "--", *EVERYTHING],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Streaming elicitation: decline\n"
    assert "the server asked for input: 'Continue?'" in proc.stderr
    assert "stdin is not a terminal" in proc.stderr and "declined" in proc.stderr


def answer(params: dict[str, object], typed: str) -> tuple[object, str]:
    """What `ask` returns for these params when the user types `typed`, and the screen."""
    import msgspec

    screen = io.StringIO()
    result = ask(msgspec.convert(params, ElicitRequestParams), io.StringIO(typed), screen)
    return msgspec.to_builtins(result), screen.getvalue()


def test_defaults_enums_numbers_and_booleans() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "status": {"type": "string", "enum": ["active", "pending"]},
            "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "First"}]},
            "many": {
                "type": "array",
                "minItems": 1,
                "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
            },
            "ok": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["age"],
    }
    typed = "a\n\n200\nx\n42\n2\nFirst\n1,b\nmaybe\ny\n\n"
    result, screen = answer({"message": "Profile", "requestedSchema": schema}, typed)
    assert result == {
        "action": "accept",
        "content": {
            "name": "John",
            "age": 42,
            "status": "pending",
            "titled": "v1",
            "many": ["a", "b"],
            "ok": True,
        },
    }
    assert "give a number from 0 to 150" in screen
    assert "give a whole number" in screen  # "x" is no integer
    assert "  1) active" in screen and "  1) v1  (First)" in screen
    assert "answer y or n" in screen
    assert "ok (y/n)" in screen and "many (several, comma-separated)" in screen
    assert "age (integer, from 0 to 150, required)" in screen


def test_numbers_must_be_finite_and_integers_whole() -> None:
    """server-everything's form: `nan` and `inf` passed the range check of a number field
    (NaN compares false to both bounds) and were sent; an integer field answered with a
    Python parser's message. Whole numbers written `4.0` or `1e2` are integers."""
    schema = {
        "type": "object",
        "properties": {
            "number": {"type": "number", "minimum": 0, "maximum": 1000},
            "integer": {"type": "integer", "minimum": 1},
            "free": {"type": "number"},
        },
        "required": ["number", "integer", "free"],
    }
    typed = "a\nnan\ninf\n-1\n2.5\n4.5\nfour\n1e2\n-Infinity\n-7.25\n"
    result, screen = answer({"message": "Numbers?", "requestedSchema": schema}, typed)
    assert result == {"action": "accept", "content": {"number": 2.5, "integer": 100, "free": -7.25}}
    assert screen.count("give a number, such as 2.5") == 3  # nan, inf, -Infinity
    assert screen.count("give a number from 0 to 1000") == 1  # -1
    assert screen.count("give a whole number") == 2  # 4.5, four
    assert "number (number, from 0 to 1000, required)" in screen
    assert "integer (integer, from 1, required)" in screen
    assert "invalid literal" not in screen


def test_url_mode_shows_the_url_and_end_of_input_cancels() -> None:
    url = {"message": "Sign in", "mode": "url", "url": "https://example.org/auth"}
    result, screen = answer(url, "a\n")
    assert result == {"action": "accept"}
    assert "Open this URL: https://example.org/auth" in screen
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    result, screen = answer({"message": "X?", "requestedSchema": schema}, "a\n")
    assert result == {"action": "cancel"}
    assert "cancelled" in screen


def test_formats_and_lengths_are_checked_and_asked_again() -> None:
    """An email for a `format: uri` field (the issue's case), a date that is no date, a
    timestamp without its offset, a name too short: each is refused and asked again."""
    schema = {
        "type": "object",
        "properties": {
            "site": {"type": "string", "format": "uri"},
            "mail": {"type": "string", "format": "email"},
            "day": {"type": "string", "format": "date"},
            "when": {"type": "string", "format": "date-time"},
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
        },
        "required": ["site", "mail", "day", "when", "name"],
    }
    typed = (
        "a\nada@example.com\nhttps://example.com/ada\n"  # site
        "ada\nada@example\nada@example.com\n"  # mail
        "2026-13-01\n20260501\n2026-05-01\n"  # day
        "2026-05-01T09:30:00\n2026-05-01T09:30:00+02:00\n"  # when
        "A\nAdaLovelace\nAda\n"  # name
    )
    result, screen = answer({"message": "Who?", "requestedSchema": schema}, typed)
    assert result == {
        "action": "accept",
        "content": {
            "site": "https://example.com/ada",
            "mail": "ada@example.com",
            "day": "2026-05-01",
            "when": "2026-05-01T09:30:00+02:00",
            "name": "Ada",
        },
    }
    assert screen.count("give a URI with its scheme") == 1
    assert screen.count("give an email address") == 2
    assert screen.count("give a date as YYYY-MM-DD") == 2
    assert screen.count("give a date and time with its offset") == 1
    assert screen.count("give 2 to 5 characters") == 2
