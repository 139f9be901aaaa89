"""The Python blocks of docs/guide/authorization-client.md run as written (in order,
in one namespace, as a reader pasting them would)."""

from __future__ import annotations

import re

from tests.conftest import REPO

PAGE = REPO / "docs" / "guide" / "authorization-client.md"


def test_the_python_blocks_of_the_client_authorization_guide_run() -> None:
    blocks = re.findall(r"```python\n(.+?)```", PAGE.read_text(), flags=re.S)
    assert len(blocks) >= 4
    namespace: dict[str, object] = {"__name__": "guide"}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
    assert callable(namespace["list_protected_tools"])
    assert isinstance(namespace["auth"].redirect, namespace["AskTheUser"])  # type: ignore[arg-type,attr-defined]
