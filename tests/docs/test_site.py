"""The site builds with Zensical and with `mkdocs build --strict`, without a warning or a
broken link, and its navigation lists exactly the pages under docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.docs.site import Build, broken_links, build

pytestmark = pytest.mark.docs


def nav_pages() -> list[str]:
    config = (REPO / "mkdocs.yml").read_text()
    nav = config.split("\nnav:\n", 1)[1]
    return re.findall(r"([\w./-]+\.md)\s*$", nav, flags=re.M)


def test_the_nav_lists_every_page_and_only_pages_that_exist() -> None:
    listed = nav_pages()
    assert len(listed) == len(set(listed)), "a page is listed twice"
    on_disk = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    assert sorted(set(listed) - on_disk) == [], "listed in mkdocs.yml, missing under docs/"
    assert sorted(on_disk - set(listed)) == [], "under docs/, missing from mkdocs.yml's nav"


def test_the_config_parses_and_names_the_material_theme() -> None:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml names a Python function (the mermaid fence); SafeLoader refuses the tag.
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)
    assert config["theme"]["name"] == "material"
    assert config["strict"] is True
    assert any("mkdocstrings" in plugin for plugin in config["plugins"] if isinstance(plugin, dict))
    # No invented location: the site and the repository have no public address yet.
    assert not {"site_url", "repo_url", "repo_name", "edit_uri"} & set(config)


def check(result: Build, warning: str) -> None:
    assert result.returncode == 0, result.output[-4000:]
    warnings = [line for line in result.output.splitlines() if warning in line]
    assert not warnings, result.output[-4000:]
    assert (result.site / "index.html").is_file()
    assert (result.site / "reference" / "mcpgen" / "index.html").is_file()
    assert broken_links(result.site) == []


@pytest.mark.slow
def test_zensical_builds_the_site_without_a_warning(zensical_site: Build) -> None:
    check(zensical_site, "Warning")
    assert "No issues found" in zensical_site.output, zensical_site.output[-4000:]


@pytest.mark.slow
def test_mkdocs_strict_builds_the_site_without_a_warning(tmp_path: Path) -> None:
    check(build("mkdocs", tmp_path), "WARNING")


REFERENCE = {
    "mcpgen": "mcpgen",
    "mcpgen.auth": "auth",
    "mcpgen.stores": "stores",
    "mcpgen.stores.redis": "redis",
    "mcpgen.transports": "transports",
    "mcpgen.proxy": "proxy",
    "mcpgen.stubs": "stubs",
    "mcpgen_types.v2026_07_28": "types/v2026_07_28",
    "mcpgen_types.ext_tasks": "types/ext_tasks",
    "mcpgen_types.ext_apps": "types/ext_apps",
}


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(REFERENCE))
def test_the_api_reference_renders_every_public_name(zensical_site: Build, module: str) -> None:
    import importlib

    names = [n for n in importlib.import_module(module).__all__ if n != "__version__"]
    page = (zensical_site.site / "reference" / REFERENCE[module] / "index.html").read_text()
    assert [name for name in names if f'id="{module}.{name}"' not in page] == []
