"""The documentation's code blocks as test items, and the built site as a fixture.

`test_blocks.py` holds a `test_docs_code_blocks` marker; the hook below replaces it with
one item per ```` ```python ```` block of docs/**/*.md, named `<page>:<line>` (for
example `tests/docs/test_blocks.py::test_docs_code_blocks::guide/servers.md:42`), so a
failure points at the block. The rules a block follows are in tests/docs/blocks.py.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.docs import blocks as docs_blocks
from tests.docs.site import Build, build

MARKER = "test_docs_code_blocks"


class BlockFailedError(Exception):
    pass


class DocBlock(pytest.Item):
    def __init__(self, *, block: docs_blocks.Block, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.block = block
        self.add_marker(pytest.mark.docs)
        if block.language != docs_blocks.PEER:
            # Each block runs in a fresh interpreter (a second or more apiece): the whole
            # suite and `-m docs` run them; the quick tier compiles them (test_blocks.py).
            self.add_marker(pytest.mark.slow)

    def runtest(self) -> None:
        code = "\n" * (self.block.line - 1) + self.block.code
        compile(code, str(self.block.page), "exec")  # a SyntaxError fails here
        if self.block.language == docs_blocks.PEER:
            return  # another SDK's code: valid Python is all that can be checked here
        with tempfile.TemporaryDirectory(prefix="mcpgen-docs-") as scratch:
            tmp = Path(scratch) / "block.py"
            tmp.write_text(self.block.code)
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    docs_blocks.RUNNER,
                    str(self.block.page),
                    str(self.block.line),
                    str(tmp),
                ],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=docs_blocks.TIMEOUT,
                check=False,
            )
        if done.returncode != 0:
            raise BlockFailedError(f"exit status {done.returncode}\n{done.stdout}{done.stderr}")
        if self.block.output is not None and done.stdout != self.block.output:
            raise BlockFailedError(
                "printed something else than the page's `# output` block\n"
                f"--- page says\n{self.block.output}--- printed\n{done.stdout}"
            )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        where = f"docs/{self.block.name}"
        if isinstance(excinfo.value, BlockFailedError):
            return f"the Python block at {where} failed: {excinfo.value}"
        if isinstance(excinfo.value, subprocess.TimeoutExpired):
            return f"the Python block at {where} ran over {docs_blocks.TIMEOUT} s"
        return f"the Python block at {where}: {excinfo.exconly()}"

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.block.page, self.block.line - 1, f"docs/{self.block.name}"


class DocBlocks(pytest.Collector):
    def collect(self) -> Iterator[DocBlock]:
        for block in docs_blocks.python_blocks():
            covered = docs_blocks.page_key(block) in docs_blocks.COVERED_ELSEWHERE
            if covered and block.language in docs_blocks.PYTHON:
                continue  # listed, and test_blocks.py checks the listed test runs them
            yield DocBlock.from_parent(self, name=block.name, block=block)


def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> DocBlocks | None:
    if name == MARKER and isinstance(collector, pytest.Module):
        return DocBlocks.from_parent(collector, name=name)
    return None


@pytest.fixture(scope="session")
def zensical_site(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The site as `zensical build` makes it: one build per test run, shared by the
    parallel workers (the first builds under a file lock, the others read its result)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, above each worker's own
    with (root / "zensical.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "zensical.json"
        if done.is_file():
            site, output, returncode = json.loads(done.read_text())
            return Build(Path(site), output, returncode)
        result = build("zensical", Path(tempfile.mkdtemp(prefix="zensical-", dir=root)))
        done.write_text(json.dumps([str(result.site), result.output, result.returncode]))
        return result
