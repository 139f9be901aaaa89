"""The built site as a reader meets it: the API reference shows public, documented
members (no attribute assignments, no `core`), with Args/Returns/Raises sections where
they were written; search finds the guides before generated-type members (those pages
are out of the index); and the site claims no home or repository it does not have."""

from __future__ import annotations

import json
import re

import pytest

from tests.docs.site import Build

# Each test reads the built site: a site build is outside the quick tier (CONTRIBUTING.md).
pytestmark = [pytest.mark.docs, pytest.mark.slow]


def _member_ids(page: str, owner: str) -> set[str]:
    return set(re.findall(rf'id="{re.escape(owner)}\.([A-Za-z_]\w*)"', page))


def test_the_reference_shows_public_documented_members_only(zensical_site: Build) -> None:
    assert zensical_site.returncode == 0, zensical_site.output[-3000:]
    page = (zensical_site.site / "reference" / "mcpgen" / "index.html").read_text()
    server = _member_ids(page, "mcpgen.Server")
    assert {"tool", "run", "asgi_app", "remove_tool", "notify_tools_changed"} <= server
    assert not {"core", "lifecycle", "redis", "info"} & server  # internals, attributes
    assert "core" not in _member_ids(page, "mcpgen.Client")
    assert {"list_tools", "call_tool", "era", "protocol_version"} <= _member_ids(
        page, "mcpgen.Client"
    )
    assert "None if lifespan is None" not in page  # an attribute's implementation
    # Parameters / Returns / Raises sections where the docstring has them.
    after = page.split('id="mcpgen.Client.call_tool"', 1)[1]
    call_tool = after.split('id="mcpgen.Client.', 1)[0]  # up to the next member
    for section in ("Parameters:", "Returns:", "Raises:"):
        assert section in call_tool, section


def test_search_finds_the_guides_not_thousands_of_generated_members(
    zensical_site: Build,
) -> None:
    items = json.loads((zensical_site.site / "search.json").read_text())["items"]
    locations = [item["location"] for item in items]
    assert not [loc for loc in locations if loc.startswith("reference/types/v")]
    assert any(loc.startswith("reference/types/") for loc in locations)  # its index page
    guides = [loc for loc in locations if loc.startswith("guide/")]
    assert len(guides) > len(locations) / 5  # the guides are a good part of the index
    elicitation = [item["location"] for item in items if "elicitation" in item["text"].lower()]
    assert elicitation and elicitation[0].split("/")[0] != "reference"


def test_the_site_names_no_invented_home_or_repository(zensical_site: Build) -> None:
    """The project has no public site or repository yet: no page claims one (no
    canonical address, no repository link in the header, no edit button)."""
    for page in ("index.html", "guide/servers/index.html", "reference/mcpgen/index.html"):
        html = (zensical_site.site / page).read_text()
        assert 'rel="canonical"' not in html, page
        assert "md-source" not in html and "github.com/mcpgen" not in html, page
        assert "Edit this page" not in html, page
