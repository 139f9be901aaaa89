"""Building the documentation site in a scratch directory, for the tests.

Zensical insists that `docs_dir` lies inside the project root, so a build copies
`mkdocs.yml` and `docs/` into a temporary project and points mkdocstrings at the
repository's sources by absolute path; nothing is written into the checkout.
"""

from __future__ import annotations

import html.parser
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.conftest import REPO
from tests.docs.assets import install as install_assets

BIN = Path(sys.executable).parent
_SITE_URL = re.search(r"^site_url: (\S+)$", (REPO / "mkdocs.yml").read_text(), re.M)
SITE_PATH = urlsplit(_SITE_URL[1]).path.rstrip("/") if _SITE_URL else ""  # e.g. "/mcpgen"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Build:
    site: Path
    output: str  # stdout + stderr, colour codes removed
    returncode: int


def scratch_project(root: Path) -> Path:
    """A copy of mkdocs.yml and docs/ (with the assets of tests/docs/assets.py) under
    `root`; returns the config file."""
    shutil.copytree(REPO / "docs", root / "docs")
    install_assets(root / "docs")  # Mermaid, served by the site itself
    config = (REPO / "mkdocs.yml").read_text()
    sources = f"paths: [{REPO / 'runtime'}, {REPO / 'generated'}]"
    assert "paths: [runtime, generated]" in config
    (root / "mkdocs.yml").write_text(config.replace("paths: [runtime, generated]", sources))
    return root / "mkdocs.yml"


def build(tool: str, root: Path) -> Build:
    """Build with `zensical` or `mkdocs` (strict either way: mkdocs.yml says `strict`)."""
    config = scratch_project(root)
    command = {
        "zensical": [str(BIN / "zensical"), "build", "--clean", "-f", str(config)],
        "mkdocs": [str(BIN / "mkdocs"), "build", "--strict", "-f", str(config)],
    }[tool]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1"}
    proc = subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    return Build(root / "site", ANSI.sub("", proc.stdout + proc.stderr), proc.returncode)


class _Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if tag == "a" and values.get("name"):
            self.ids.add(str(values["name"]))
        key = {"a": "href", "link": "href", "img": "src", "script": "src"}.get(tag)
        if key and values.get(key):
            self.links.append(str(values[key]))


def parse(page: Path) -> _Page:
    parser = _Page()
    parser.feed(page.read_text(errors="replace"))
    return parser


def broken_links(site: Path) -> list[str]:
    """Every link of every built page that points inside the site at a file or an anchor
    that is not there; links to other hosts are not followed."""
    pages = {page: parse(page) for page in site.rglob("*.html")}
    broken: list[str] = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "data:")):
                continue
            path = unquote(parts.path)
            if not path:
                target = page
            elif path.startswith("/"):  # the 404 page links from the site's root, which
                # is site_url's path when mkdocs.yml sets one
                target = (site / path.removeprefix(SITE_PATH).lstrip("/")).resolve()
            else:
                target = (page.parent / path).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site)}: {link}"
            if not target.is_file():
                broken.append(f"{where} (no such file)")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html":
                known = pages.get(target) or parse(target)
                if fragment not in known.ids:
                    broken.append(f"{where} (no such anchor)")
    return broken
