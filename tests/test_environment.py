"""The environment CI relies on: never let a missing input turn into silent skips."""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.conftest import REPO, strict_skips


def test_schema_dir_is_present_in_ci() -> None:
    """In CI a missing schema directory must fail the run, not skip half of it."""
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip("only meaningful in CI (CI=true)")
    directory = os.environ.get("MCPGEN_SCHEMA_DIR")
    assert directory, "CI must set MCPGEN_SCHEMA_DIR (see .ci/run)"
    assert (Path(directory) / "2026-07-28" / "schema.json").is_file(), directory


def test_ci_turns_skips_into_failures() -> None:
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        pytest.skip("only meaningful in CI (CI=true)")
    assert strict_skips(), "CI must run with MCPGEN_STRICT_SKIPS=1"


def _locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for text in (REPO / "constraints-dev.txt").read_text().splitlines():
        pin = text.split("#", 1)[0].strip()
        if pin:
            name, sep, version = pin.partition("==")
            assert sep, f"constraints-dev.txt pins exact versions only: {pin!r}"
            pins[_normal(name)] = version
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _dev_closure() -> set[str]:
    """Every distribution `mcpgen[dev]` brings into this interpreter, extras followed."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [("mcpgen", frozenset({"dev"}))]
    while todo:
        name, extras = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a marker kept it out of this interpreter
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is not None and not any(
                req.marker.evaluate({"extra": extra}) for extra in extras or {""}
            ):
                continue
            key = _normal(req.name)
            if key == "mcpgen":
                todo.append((key, frozenset(req.extras)))
            elif key not in seen:
                seen.add(key)
                todo.append((key, frozenset(req.extras)))
    return seen


def test_the_lock_pins_every_dev_dependency() -> None:
    """The README's test command installs through constraints-dev.txt: every package of the
    dev closure has an exact pin there, so no upstream release changes what CI runs."""
    pins = _locked()
    missing = sorted(_dev_closure() - pins.keys())
    assert not missing, f"add these to constraints-dev.txt (.ci/drift --write): {missing}"


def test_the_installed_environment_is_the_locked_one() -> None:
    """What is installed is what is locked (.ci/drift sets MCPGEN_DRIFT=1: it runs the suite
    on the newest releases on purpose)."""
    if os.environ.get("MCPGEN_DRIFT") == "1":
        pytest.skip("drift run: the newest releases, not the lock")
    pins = _locked()
    off = {
        name: (metadata.version(name), pins[name])
        for name in sorted(_dev_closure())
        if name in pins and metadata.version(name) != pins[name]
    }
    assert not off, f"installed != locked (name: (installed, locked)): {off}"
