"""The performance claims of the landing pages hold for what they say: every ratio they
quote is one docs/performance.md publishes, and each names its workload and the official
server it was measured against."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

PERFORMANCE = (REPO / "docs" / "performance.md").read_text()
RATIO = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)x\b")
PAGES = ["README.md", "docs/index.md"]


def _published() -> set[str]:
    return set(RATIO.findall(PERFORMANCE))


@pytest.mark.parametrize("page", PAGES)
def test_every_quoted_ratio_is_published(page: str) -> None:
    text = " ".join((REPO / page).read_text().split())
    quoted = RATIO.findall(text)
    assert len(quoted) >= 4, quoted  # the page does state figures
    assert set(quoted) <= _published(), set(quoted) - _published()
    # ... with what they hold for: the workload, the transport, the other side.
    for words in ("echo", "100 tools", "16 connections", "mcp` 2.3.0", "MCPServer", "`Server`"):
        assert words in text, words
    assert "threaded=False" in text  # mcpgen's benchmark tools, as the runs had them


def test_no_unqualified_multiples() -> None:
    """The old claims ("over 20 times", "15 to 19 times") said neither workload nor server."""
    for page in PAGES:
        text = (REPO / page).read_text()
        assert not re.search(r"\d+ (to \d+ )?times", text), page
