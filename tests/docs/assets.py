"""Assets the documentation site serves itself, so that nothing loads from a CDN when a
page is read.

Mermaid draws the diagrams (docs/guide/tasks.md, docs/guide/input-requests.md). The
theme fetches it from a CDN unless a `mermaid` global is already defined; mkdocs.yml's
`extra_javascript` defines it from `assets/javascripts/mermaid.min.js`, the
`dist/mermaid.min.js` of the npm package `mermaid` (5 MB, so it is not committed: it is
installed into the test cache like the suite's other npm packages, and copied in before
a build). The docs tests' builds copy it themselves; before building by hand:

    python -m tests.docs.assets     # writes docs/assets/javascripts/mermaid.min.js
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.tooling import npm_package

__all__ = ["MERMAID", "MERMAID_JS", "install"]

MERMAID = "mermaid@12.3.0"  # the major version the theme's bundle asks the CDN for
MERMAID_JS = Path("assets") / "javascripts" / "mermaid.min.js"  # under docs/


def install(docs: Path) -> Path:
    """Copy Mermaid into the docs directory `docs`; returns the file written."""
    source = npm_package(MERMAID) / "mermaid" / "dist" / "mermaid.min.js"
    target = docs / MERMAID_JS
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


if __name__ == "__main__":
    written = install(REPO / "docs")
    sys.stdout.write(f"wrote {written.relative_to(REPO)}\n")
