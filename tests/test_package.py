"""mcpgen as a package, not only a checkout: `python -m build` makes an sdist and a wheel
from a fresh copy of the tracked files; the wheel holds the three packages and their
metadata and nothing else; the sdist rebuilds the same wheel; and the wheel, installed
(not editable) into a new virtualenv, serves the quickstart's server to `mcpgen call`
over stdio and over Streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.checkout import fresh_checkout, need_index
from tests.conftest import REPO
from tests.docs.blocks import fenced_blocks
from tests.processes import http_server

pytestmark = pytest.mark.slow

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
VERSION = PROJECT["version"]
DIST_INFO = f"mcpgen-{VERSION}.dist-info"
# Where each package lives in the repository.
PACKAGES = {"mcpgen": "runtime", "mcpgen_types": "generated", "mcpgen_codegen": "codegen"}


@dataclass(frozen=True)
class Built:
    source: Path  # the fresh checkout it was built from
    sdist: Path
    wheel: Path  # built from the sdist, as `python -m build` does
    direct: Path  # built from the checkout (`python -m build --wheel`)


def _build(source: Path, out: Path, *flags: str) -> list[Path]:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", *flags, "--outdir", str(out), "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return sorted(out.iterdir())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("package")
    source = fresh_checkout(root / "mcpgen")
    wheel, sdist = _build(source, root / "dist")  # sorted: "-py3-..." before ".tar.gz"
    assert sdist.name == f"mcpgen-{VERSION}.tar.gz"
    assert wheel.name == f"mcpgen-{VERSION}-py3-none-any.whl"
    (direct,) = _build(source, root / "direct", "--wheel")
    return Built(source, sdist, wheel, direct)


def _tracked(under: str) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", under], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return set(listed)


def test_the_wheel_holds_the_three_packages_and_their_metadata_only(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as wheel:
        names = set(wheel.namelist())
        entry_points = wheel.read(f"{DIST_INFO}/entry_points.txt").decode()
        metadata = wheel.read(f"{DIST_INFO}/METADATA").decode()
    expected = {
        name.split("/", 1)[1]
        for package, folder in PACKAGES.items()
        for name in _tracked(f"{folder}/{package}")
    }
    meta = {f"{DIST_INFO}/{n}" for n in ("METADATA", "WHEEL", "RECORD", "entry_points.txt")}
    meta.add(f"{DIST_INFO}/licenses/LICENSE")
    assert names == expected | meta  # every tracked module and template; no tests, no caches
    for package in PACKAGES:
        assert f"{package}/py.typed" in names
        assert f"{package}/__init__.py" in names
    assert not any("test" in name.split("/")[0] or "__pycache__" in name for name in names)
    assert "mcpgen = mcpgen.cli:main" in entry_points
    assert "codegen = mcpgen_codegen.launch:register" in entry_points
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "\nRequires-Dist: msgspec>=0.19\n" in metadata


def test_the_sdist_holds_the_sources_and_rebuilds_the_same_wheel(built: Built) -> None:
    with tarfile.open(built.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {
        "runtime",
        "generated",
        "codegen",
        "schema",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "pyproject.toml",
        "PKG-INFO",
        ".gitignore",
    }
    assert {"schema/pins.toml", "schema/patches.toml", "schema/policy.toml"} <= names
    with zipfile.ZipFile(built.wheel) as a, zipfile.ZipFile(built.direct) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            assert a.read(name) == b.read(name), name
    assert built.wheel.read_bytes() == built.direct.read_bytes()  # byte for byte, too


def _quickstart_server() -> str:
    blocks = [b for b in fenced_blocks(REPO / "docs" / "quickstart.md") if b.language == "python"]
    assert "def forecast(city: str, days: int = 3)" in blocks[0].code
    return blocks[0].code


def _installed(built: Built, venv: Path) -> Path:
    """A new virtualenv with the wheel and its http and client extras (the locked
    versions), as a user installs a downloaded wheel; returns its bin directory."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    proc = subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "-c",
            str(REPO / "constraints-dev.txt"),
            f"{built.wheel}[http,client]",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    need_index(proc, "the wheel's dependencies")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return bin_dir


def test_the_installed_wheel_serves_the_quickstart(built: Built, tmp_path: Path) -> None:
    bin_dir = _installed(built, tmp_path / "venv")
    work = tmp_path / "work"  # outside the checkout: only the installed package is importable
    work.mkdir()
    (work / "server.py").write_text(_quickstart_server())
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"

    def run(*argv: str) -> str:
        proc = subprocess.run(
            argv, cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    where = run("python", "-c", "import mcpgen, mcpgen_types; print(mcpgen.__file__)")
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel, not the checkout
    assert run("mcpgen", "--version") == f"mcpgen {VERSION}\n"
    stdio = ["--", "python", "server.py"]
    assert run("mcpgen", "tools", *stdio).splitlines()[0].startswith("forecast(")
    called = run("mcpgen", "call", "forecast", '{"city": "Paris"}', *stdio)
    assert called == "Paris: 18.0 °C and sunny for 3 days\n"

    serve = [str(bin_dir / "mcpgen"), "serve", "server.py", "--transport", "http"]
    with http_server(lambda port: [*serve, "--port", str(port)], tmp_path / "log", cwd=work) as url:
        called = run("mcpgen", "call", url, "forecast", '{"city": "Oslo", "days": 2}')
        assert called == "Oslo: 9.5 °C and sunny for 2 days\n"
        by_hand = httpx.post(
            url,
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "forecast",
            },
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "forecast",
                    "arguments": {"city": "Rome"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                    },
                },
            },
            timeout=30,
        )
        assert by_hand.status_code == 200, by_hand.text
        text = by_hand.json()["result"]["content"][0]["text"]
        assert text == "Rome: 24.0 °C and sunny for 3 days"
