"""Every Python block of docs/**/*.md runs (one item per block: see conftest.py), and
nothing is left out without a named reason."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.docs import blocks

pytestmark = pytest.mark.docs


def test_docs_code_blocks() -> None:
    """Replaced at collection by one item per block (tests/docs/conftest.py)."""
    raise AssertionError("the collector in tests/docs/conftest.py did not take this over")


def test_every_python_block_compiles() -> None:
    """The quick tier's share of the blocks (running them is `slow`): each one, those a
    dedicated test runs included, is valid Python at its line of the page."""
    found = blocks.python_blocks()
    assert len({block.page for block in found}) >= 10
    for block in found:
        compile("\n" * (block.line - 1) + block.code, str(block.page), "exec")


@pytest.mark.parametrize("page", sorted(blocks.COVERED_ELSEWHERE))
def test_a_page_left_to_a_dedicated_test_is_run_by_it(page: str) -> None:
    path, _, function = blocks.COVERED_ELSEWHERE[page].partition("::")
    test_file = REPO / path
    assert test_file.is_file(), f"{page}: {path} does not exist"
    source = test_file.read_text()
    names = {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert function in names, f"{page}: {path} has no {function}"
    assert Path(page).name in source, f"{path} does not read {page}"
    assert ("```" in source and '"python"' in source) or "```python" in source, (
        f"{path} does not pick the page's Python blocks"
    )
    assert (blocks.DOCS / page).is_file(), f"{page} is listed but does not exist"
    assert any(b.language in blocks.PYTHON for b in blocks.fenced_blocks(blocks.DOCS / page))


def test_the_collector_finds_blocks_and_outputs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        textwrap.dedent(
            """\
            # A page

            ```python
            print("hi")
            ```

            ```text
            # output
            hi
            ```

            !!! note
                ```python
                x = 1
                ```

            ```sh
            echo no
            ```
            """
        )
    )
    found = blocks.fenced_blocks(page)
    assert [(b.language, b.line, b.code, b.output) for b in found] == [
        ("python", 4, 'print("hi")\n', "hi\n"),
        ("text", 8, "# output\nhi\n", None),
        ("python", 14, "x = 1\n", None),
        ("sh", 18, "echo no\n", None),
    ]


def test_no_python_block_goes_unrun(request: pytest.FixtureRequest) -> None:
    """The collector makes an item of each Python block (but those a dedicated test runs)
    and of each peer block."""
    from tests.docs.conftest import DocBlocks

    module = request.node.parent
    items = {item.name for item in DocBlocks.from_parent(module, name="check").collect()}
    found = blocks.python_blocks()
    assert found, "no Python blocks under docs/"
    for block in found:
        covered = blocks.page_key(block) in blocks.COVERED_ELSEWHERE
        if not (covered and block.language in blocks.PYTHON):
            assert block.name in items, f"{block.name} is not collected"
    assert len(items) == len(found) - sum(
        1
        for block in found
        if blocks.page_key(block) in blocks.COVERED_ELSEWHERE and block.language in blocks.PYTHON
    )
