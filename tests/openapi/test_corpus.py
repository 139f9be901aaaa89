"""Every example document of npm `@readme/oas-examples` (issue 26): each OpenAPI 3.0/3.1
one generates, imports, registers its tools on a Server, is formatted as ruff formats,
and passes `ruff check` and `mypy --strict` with no configuration (a known failure would
be listed below with its reason, the list kept exact so a fix or a regression shows);
each Swagger 2.0 one is refused with a message naming the document and saying so."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from mcpgen import ConfigurationError, Server
from mcpgen.openapi import generate
from tests.tooling import npm_package
from tests.typecheck import shared_cache

pytestmark = [pytest.mark.slow, pytest.mark.needs_node]

PACKAGE = "@readme/oas-examples@8.2.2"
# The package's documents: OpenAPI 3.0/3.1 ones written, Swagger 2.0 ones refused.
WRITTEN, REFUSED = 53, 7
# What the model generator writes from these documents that the checkers refuse: none
# (repeated enum values, enum members named like str's methods and variants narrowing
# an inherited discriminator were, until mcpgen.stubs._mend; see test_mend).
RUFF_KNOWN: dict[str, str] = {}
MYPY_KNOWN: dict[str, str] = {}


def test_every_example_document(tmp_path: Path) -> None:
    root = npm_package(PACKAGE) / "@readme" / "oas-examples"
    documents = sorted(root.glob("*/json/*.json"))
    written: list[Path] = []
    refused: list[str] = []
    for spec in documents:
        name = "v" + spec.parent.parent.name.replace(".", "_") + "_" + spec.stem.replace("-", "_")
        path = tmp_path / f"{name}.py"
        if spec.parent.parent.name == "2.0":
            with pytest.raises(ConfigurationError, match=r"is Swagger 2\.0: convert it") as said:
                generate(str(spec), path)
            assert str(spec) in str(said.value)  # the message names the document
            refused.append(spec.name)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the model generator's notes on odd schemas
            text, _ = generate(str(spec), path)
        path.write_text(text)
        loaded = importlib.util.spec_from_file_location(name, path)
        assert loaded is not None and loaded.loader is not None
        module = importlib.util.module_from_spec(loaded)
        sys.modules[name] = module
        loaded.loader.exec_module(module)
        server = Server(name, "1.0")
        module.register(server, module.Api("http://127.0.0.1:9", module.SCHEMES))
        written.append(path)
    assert (len(written), len(refused)) == (WRITTEN, REFUSED)
    ruff = [sys.executable, "-m", "ruff"]
    formatted = subprocess.run(
        [*ruff, "format", "--isolated", "--check", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout
    checked = subprocess.run(
        [*ruff, "check", "--isolated", "--output-format=concise", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert _files(checked.stdout) == set(RUFF_KNOWN), checked.stdout
    typed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *shared_cache(tmp_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert _files(typed.stdout) == set(MYPY_KNOWN), typed.stdout[-3000:]


def _files(report: str) -> set[str]:
    return {
        Path(line.split(":", 1)[0]).name
        for line in report.splitlines()
        if ".py:" in line and ("error" in line or ": " in line)
    }
