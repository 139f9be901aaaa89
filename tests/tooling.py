"""Provision the external peers the tests need, cached between runs.

- Node >= 22 (the conformance suite needs it): the PATH `node` if new enough, else
  the npm package `node-linux-<arch>@22` installed into the cache.
- npm packages (the conformance suite, the official TypeScript SDKs), one folder each.
- a virtualenv with the official Python SDK (PyPI `mcp`), kept apart from the
  project's environment so neither's dependencies leak into the other.

Every helper calls `need()`: without npm/network it fails (MCPGEN_ALLOW_MISSING=node or
network skips instead, outside CI: tests/conftest.py).
"""

from __future__ import annotations

import fcntl
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import need

CACHE = Path(
    os.environ.get("MCPGEN_TEST_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcpgen-tests"
)
OFFICIAL_PYTHON_SDK = "mcp==2.3.0"
CONFORMANCE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
# The reference servers (PyPI), built on the official SDK: one virtualenv of their own.
REFERENCE_SERVERS = (
    "mcp-server-time==2026.10.19",
    "mcp-server-fetch==2026.10.24",
    "mcp-server-git==2026.10.19",
)


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """Serialize installs of one thing across processes (pytest-xdist, parallel CI)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _run(cmd: list[str], what: str, timeout: int = 900, **kw: object) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False, **kw)  # type: ignore[call-overload]
    need(
        proc.returncode == 0,
        f"{what} ({' '.join(cmd)} failed: {proc.stderr.strip()[-400:]})",
        "network",
    )


def npm() -> str:
    path = shutil.which("npm")
    need(path is not None, "npm (Node.js)", "node")
    assert path is not None
    return path


def _node_major(node: str) -> int:
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return int(out.stdout.split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


def _npm_install(prefix: Path, spec: str, what: str) -> None:
    args = ["install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error"]
    _run([npm(), *args, spec], what)


def node22() -> str:
    """A Node.js binary of major version 22 or newer."""
    system = shutil.which("node")
    if system and _node_major(system) >= 22:
        return system
    arch = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), "x64")
    prefix = CACHE / "node22"
    binary = prefix / "node_modules" / f"node-linux-{arch}" / "bin" / "node"
    with _locked("node22"):
        if not binary.exists():
            _npm_install(prefix, f"node-linux-{arch}@22", "Node 22 from the npm registry")
    need(binary.exists() and _node_major(str(binary)) >= 22, "Node >= 22", "node")
    return str(binary)


def npm_package(spec: str) -> Path:
    """Install `spec` (name@version) into its own cached prefix; returns node_modules."""
    prefix = CACHE / "npm" / spec.replace("/", "__").replace("@", "_")
    marker = prefix / ".installed"
    with _locked("npm-" + prefix.name):
        if not marker.exists():
            _npm_install(prefix, spec, f"npm package {spec}")
            marker.write_text(spec)
    return prefix / "node_modules"


def npm_bundle(name: str, *specs: str) -> Path:
    """Install several packages (name@version each) into one cached prefix, for tools
    that must resolve each other (a bundler and what it bundles); returns node_modules."""
    prefix = CACHE / "npm" / name
    marker = prefix / ".installed"
    wanted = " ".join(specs)
    with _locked("npm-" + name):
        if not marker.exists() or marker.read_text() != wanted:
            args = ["install", "--prefix", str(prefix), "--no-audit", "--no-fund"]
            _run([npm(), *args, "--loglevel=error", *specs], f"npm packages {wanted}")
            marker.write_text(wanted)
    return prefix / "node_modules"


def official_python() -> str:
    """A python with the official MCP SDK (and not mcpgen) installed."""
    venv = CACHE / ("venv-" + OFFICIAL_PYTHON_SDK.replace("==", "-"))
    python = venv / "bin" / "python"
    with _locked("official-python"):
        if not (venv / ".installed").exists():
            _run([sys.executable, "-m", "venv", "--clear", str(venv)], "a virtualenv")
            _run(
                [str(python), "-m", "pip", "install", "-q", OFFICIAL_PYTHON_SDK],
                f"PyPI {OFFICIAL_PYTHON_SDK}",
            )
            (venv / ".installed").write_text(OFFICIAL_PYTHON_SDK)
    return str(python)


def reference_servers() -> Path:
    """The bin/ folder of a virtualenv holding the PyPI reference servers (`mcp-server-time`,
    `-fetch`, `-git`), apart from the project's environment and the official SDK's."""
    venv = CACHE / "venv-reference-servers"
    wanted = " ".join(REFERENCE_SERVERS)
    with _locked("reference-servers"):
        marker = venv / ".installed"
        if not marker.exists() or marker.read_text() != wanted:
            _run([sys.executable, "-m", "venv", "--clear", str(venv)], "a virtualenv")
            _run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *REFERENCE_SERVERS],
                f"PyPI {wanted}",
            )
            marker.write_text(wanted)
    return venv / "bin"
