"""The fenced code blocks of the documentation pages, and how a Python block is run.

The convention every page follows (docs/CONTRIBUTING-docs.md says the same to writers):

* Each ```` ```python ```` block is a complete program on its own: it imports what it uses
  and defines what it calls; it never relies on an earlier block of the page.
* It runs in a fresh interpreter from the repository root, like `python -c`, except that
  its `__name__` is `"docs_example"`: an `if __name__ == "__main__": server.run()` guard
  does not start the server. Timeout: 60 seconds. `MCPGEN_SCHEMA_DIR` and the rest of the
  environment pass through.
* A block that needs a peer talks to it in memory (`Client.memory(server)`), never over a
  port or a subprocess it cannot clean up.
* A block followed (blank lines aside) by a ```` ```text ```` block whose first line is
  `# output` must print exactly the rest of that text block.
* Another SDK's code, shown side by side in a migration page, is fenced as
  ```` ```py-peer ```` (highlighted as Python, and the page says what it is): such a
  block is compiled, so it stays valid Python, but not run (that SDK is not installed).
  A page whose blocks a dedicated test already runs, with the outputs it expects, is
  listed in `COVERED_ELSEWHERE` with that test. Nothing else is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO

DOCS = REPO / "docs"
TIMEOUT = 60
RUN_NAME = "docs_example"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
PYTHON = {"python", "py", "python3"}
PEER = "py-peer"  # another SDK's code: compiled, not run

# page (relative to docs/) -> the test that runs every Python block of it, with the outputs
# the page shows; tests/docs/test_blocks.py checks the test exists and reads that page.
COVERED_ELSEWHERE: dict[str, str] = {
    "guide/authorization-server.md": (
        "tests/auth/test_guide.py::"
        "test_every_python_block_runs_and_the_first_prints_what_the_page_shows"
    ),
    "guide/authorization-client.md": (
        "tests/auth/test_oauth_client_docs.py::"
        "test_the_python_blocks_of_the_client_authorization_guide_run"
    ),
    "guide/stubs.md": (
        "tests/stubs/test_guide.py::test_python_blocks_run_and_print_what_the_page_shows"
    ),
    "guide/scale-out.md": (
        "tests/scale/test_guide.py::test_every_python_block_runs_and_prints_what_the_page_shows"
    ),
    "guide/proxy.md": "tests/proxy/test_guide.py::test_the_guides_examples_run_as_written",
    "guide/production.md": "tests/transports/test_production.py::test_https_from_uvicorn",
    "guide/input-requests.md": (
        "tests/server/test_await_input.py::test_the_guides_examples_run_as_written"
    ),
}


@dataclass(frozen=True)
class Block:
    page: Path  # absolute
    line: int  # 1-based line of the block's first code line
    language: str
    code: str
    output: str | None  # what it must print, from a following `# output` text block

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(DOCS).as_posix()}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """Every fenced block of a Markdown page, in order (indented ones too, dedented)."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        words = opening["info"].strip().lstrip("{.").split()
        language = words[0].rstrip("}") if words else ""
        body: list[str] = []
        index += 1
        start = index + 1
        while index < len(lines):
            closing = FENCE.match(lines[index])
            if closing and closing["fence"].startswith(fence) and not closing["info"].strip():
                break
            body.append(lines[index][len(indent) :] if lines[index].startswith(indent) else "")
            index += 1
        index += 1
        code = "\n".join(body) + "\n"
        found.append(Block(page, start, language, code, None))
    return _with_outputs(found, lines)


def _with_outputs(found: list[Block], lines: list[str]) -> list[Block]:
    paired: list[Block] = []
    for position, block in enumerate(found):
        output = None
        following = found[position + 1] if position + 1 < len(found) else None
        if block.language in PYTHON and following is not None:
            closing = block.line + block.code.count("\n")  # the closing fence's line (1-based)
            between = lines[closing : following.line - 2]
            first, _, rest = following.code.partition("\n")
            is_output = following.language == "text" and first.strip() == "# output"
            if is_output and not any(line.strip() for line in between):
                output = rest
        paired.append(Block(block.page, block.line, block.language, block.code, output))
    return paired


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def python_blocks() -> list[Block]:
    """The blocks the collector makes items of: Python to run, peer code to compile."""
    wanted = {*PYTHON, PEER}
    return [block for page in pages() for block in fenced_blocks(page) if block.language in wanted]


def page_key(block: Block) -> str:
    return block.page.relative_to(DOCS).as_posix()


# Run in the child: the block's lines keep their line numbers in the page, so a traceback
# names the page and the line of the failing statement.
RUNNER = f"""\
import sys, types
page, first, source = sys.argv[1], int(sys.argv[2]), open(sys.argv[3]).read()
module = types.ModuleType({RUN_NAME!r})
module.__file__ = page
sys.modules[{RUN_NAME!r}] = module
exec(compile("\\n" * (first - 1) + source, page, "exec"), module.__dict__)
"""
