"""Headless Chromium (the Debian `chromium` package) renders the built site: the index
page and an API page show the site's title and its navigation, and a screenshot of each
is a real picture, not a blank one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, need
from tests.docs.site import Build

pytestmark = [pytest.mark.docs, pytest.mark.needs_chromium]

PAGES = {
    "index.html": ["Quickstart", "Guide", "Reference"],
    "reference/mcpgen/index.html": ["Server", "Client", "Context", "Reference"],
}


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    need(found is not None, "chromium", "chromium")
    assert found is not None
    return found


def run_chromium(*args: str) -> subprocess.CompletedProcess[str]:
    # Root in a container: Chromium's sandbox needs user namespaces it may not get.
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def pixel_spread(png: Path) -> float:
    from PIL import Image, ImageStat  # matplotlib's dependency: the docs extra has it

    with Image.open(png) as image:
        return float(ImageStat.Stat(image.convert("L")).stddev[0])


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(PAGES))
def test_chromium_renders_the_title_and_the_navigation(
    zensical_site: Build, page: str, tmp_path: Path
) -> None:
    assert zensical_site.returncode == 0, zensical_site.output[-3000:]
    url = (zensical_site.site / page).as_uri()
    dom = run_chromium("--virtual-time-budget=3000", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<title>" in dom.stdout and "mcpgen" in dom.stdout.split("<title>", 1)[1][:200]
    nav = dom.stdout.split('class="md-nav', 1)
    assert len(nav) == 2, "no navigation in the rendered page"
    for entry in PAGES[page]:
        assert entry in nav[1], f"{page}: the navigation has no {entry!r}"
    shot = tmp_path / "page.png"
    done = run_chromium(f"--screenshot={shot}", "--window-size=1280,900", url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert pixel_spread(shot) > 10, "the screenshot is blank"


@pytest.mark.slow  # a site build and a browser: outside the quick tier
@pytest.mark.parametrize("page", ["guide/tasks", "guide/input-requests"])
def test_mermaid_diagrams_draw_offline(zensical_site: Build, page: str) -> None:
    """With every host name unresolvable (no CDN), each ```mermaid block of the page is
    drawn (its source replaced by the rendered diagram) from the site's own copy."""
    assert zensical_site.returncode == 0, zensical_site.output[-3000:]
    source = (REPO / "docs" / f"{page}.md").read_text()
    diagrams = source.count("```mermaid")
    assert diagrams >= 1
    built = zensical_site.site / page / "index.html"
    assert 'src="../../assets/javascripts/mermaid.min.js"' in built.read_text()
    assert (zensical_site.site / "assets" / "javascripts" / "mermaid.min.js").stat().st_size > 1e6
    offline = "--host-resolver-rules=MAP * ~NOTFOUND"
    dom = run_chromium(offline, "--virtual-time-budget=8000", "--dump-dom", built.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count('<div class="mermaid"></div>') == diagrams  # drawn (shadow DOM)
    for first_line in re.findall(r"```mermaid\n(\S+)", source):
        assert first_line not in dom.stdout  # no diagram left as its source text
