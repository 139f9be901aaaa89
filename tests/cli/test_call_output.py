"""What `mcpgen call` shows (issue 24, item 7): the server's progress notifications and
log messages on stderr while it waits (a bar on a terminal, plain lines otherwise), and
a result whose text block repeats its structured content printed once."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgen.cli._progress import Watcher

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = ["--", sys.executable, str(REPO / "examples" / "everything.py")]


def mcpgen(*words: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "mcpgen", *words]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("era", [pytest.param("legacy", marks=pytest.mark.slow), "modern"])
def test_progress_and_logs_on_stderr(era: str) -> None:
    progress = mcpgen("call", "test_tool_with_progress", "--era", era, *EVERYTHING)
    assert progress.returncode == 0, progress.stderr
    assert progress.stdout == "Progress test completed\n"
    assert progress.stderr.splitlines() == [
        f"progress {step}/100 ({step}%)  Completed step {step} of 100" for step in (0, 50, 100)
    ]
    logged = mcpgen("call", "test_tool_with_logging", "--era", era, *EVERYTHING)
    assert logged.stdout == "Tool with logging executed successfully\n"
    assert logged.stderr.splitlines() == [
        f"[info] conformance-test-server: Tool {what}"
        for what in ("execution started", "processing data", "execution completed")
    ]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_on_a_terminal() -> None:
    out = _Terminal()
    watcher = Watcher(out)
    watcher.progress(1, 4, "one")
    watcher.log("warning", {"disk": "low"}, None)
    watcher.progress(4, 4, None)
    watcher.done()
    bar = "[" + "#" * 8 + "-" * 22 + "]  25%  one"
    full = "[" + "#" * 30 + "] 100%"
    cleared = "\r" + " " * len(bar) + "\r"
    logged = f'{cleared}[warning] {{"disk": "low"}}\n{bar}'
    redrawn = f"\r{full}" + " " * (len(bar) - len(full))
    assert out.getvalue() == f"\r{bar}{logged}{redrawn}\n"


@pytest.mark.slow
def test_structured_content_printed_once(tmp_path: Path) -> None:
    server = tmp_path / "weather.py"
    server.write_text(
        "from mcpgen import Server\n\nserver = Server('w')\n\n\n"
        "@server.tool\ndef weather() -> dict[str, int]:\n    return {'celsius': 21}\n\n\n"
        "server.run()\n"
    )
    done = mcpgen("call", "weather", "--", sys.executable, str(server))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"celsius": 21}  # one JSON document, not two


CAPABLE = ["--", sys.executable, str(REPO / "tests" / "cli" / "capable_server.py")]


def test_url_elicitation_required_names_the_url() -> None:
    """A 2025-11-25 server's -32042 error (server-everything's `trigger-url-elicitation`
    with `errorPath`) lists the URL the user must open: the error alone said nothing
    the user could act on."""
    done = mcpgen("call", "sign_in", *CAPABLE)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error -32042: This request requires browser-based authorization.",
        "open https://example.com/sign-in  (Sign in first.)",
        "then run the command again",
    ]


def test_text_wrapped_as_one_field_printed_once() -> None:
    """server-filesystem answers `{"content": text}` next to that same text block: the
    text is shown, not again as a JSON object."""
    done = mcpgen("call", "wrapped", *CAPABLE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Allowed directories:\n/tmp/a\n/tmp/b\n"
    shown = mcpgen("call", "wrapped", "--json", *CAPABLE)
    assert json.loads(shown.stdout)["structuredContent"] == {
        "content": "Allowed directories:\n/tmp/a\n/tmp/b"
    }


def test_binary_sizes_are_exact() -> None:
    """256 bytes of padded base64 were shown as 258 bytes, 8 unpadded ones as 8 only by
    luck of the arithmetic; the count is now the decoded length."""
    done = mcpgen("call", "binary", *CAPABLE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[image image/png, 256 bytes]",
        "[resource mem://eight] 8 bytes",
    ]


def test_discover_with_the_modern_era_pinned() -> None:
    """`--era modern` skips the probe, and `discover` printed `?` and no capabilities:
    it now asks the server (`server/discover`)."""
    done = mcpgen("discover", "--era", "modern", *EVERYTHING)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "mcpgen-everything 1.0.0"
    assert lines[1] == "era: modern, protocol 2026-07-28"
    assert lines[2].startswith("capabilities: completions, ") and "tools" in lines[2]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_refused_sampling_says_why_without_a_traceback(era: str) -> None:
    """`--capability sampling` declares sampling and refuses every request by raising an
    `McpError` in its callback. That refusal was logged as a failing callback, with its
    traceback on stderr, and the server heard "callback failed (McpError)": a callback's
    `McpError` is now the answer itself (legacy: the JSON-RPC error sent back; modern:
    the call ends with it)."""
    done = mcpgen(
        "call", "test_sampling", '{"prompt": "hi"}', "--era", era, "--capability", "sampling",
        *EVERYTHING,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "callback failed" not in done.stderr
    assert "-32600: the mcpgen command line has no model to sample" in done.stderr
