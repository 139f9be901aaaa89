"""`mcpgen fetch-schemas`: download from a (loopback) server, verify sha256, refuse mismatches."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpgen_codegen.config import GenerationError, Pins, load_pins
from mcpgen_codegen.source import fetch_schemas, load_schema


@pytest.fixture
def pins(repo: Path) -> Pins:
    return load_pins(repo / "schema" / "pins.toml")


@pytest.fixture
def mirror(tmp_path: Path, schema_dir: Path, pins: Pins) -> Path:
    """A tree laid out like the upstream URL template: <repo>/<commit>/<path>."""
    root = tmp_path / "mirror"
    for pin in pins.revisions:
        target = root / pin.repo / pin.commit / pin.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(schema_dir / pin.local, target)
    return root


@pytest.fixture
def server(mirror: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(mirror))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{{repo}}/{{commit}}/{{path}}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_fetch_downloads_and_verifies_every_pin(server: str, pins: Pins, tmp_path: Path) -> None:
    dest = tmp_path / "cache"
    report = fetch_schemas(pins, dest, url_template=server, timeout=10)
    assert len(report) == len(pins.revisions) and all("fetched" in line for line in report)
    for pin in pins.revisions:
        assert load_schema(pin, dest)  # verified against the pin again on load
    again = fetch_schemas(pins, dest, url_template=server, timeout=10)
    assert all("cached" in line for line in again)


def test_fetch_refuses_a_sha_mismatch(
    server: str, pins: Pins, mirror: Path, tmp_path: Path
) -> None:
    pin = pins.get("2025-06-18")
    tampered = mirror / pin.repo / pin.commit / pin.path
    tampered.write_bytes(tampered.read_bytes().replace(b"string", b"strinG", 1))
    dest = tmp_path / "cache"
    with pytest.raises(GenerationError, match=r"2025-06-18: .* has sha256 .* but the pin says"):
        fetch_schemas(pins, dest, url_template=server, only="2025-06-18", timeout=10)
    assert not (dest / pin.local).exists()  # nothing written for a refused file


def test_fetch_reports_an_unreachable_file(
    server: str, pins: Pins, mirror: Path, tmp_path: Path
) -> None:
    pin = pins.get("2024-11-05")
    (mirror / pin.repo / pin.commit / pin.path).unlink()
    with pytest.raises(GenerationError, match=r"2024-11-05: download of .* failed"):
        fetch_schemas(pins, tmp_path / "c", url_template=server, only="2024-11-05", timeout=10)


@pytest.mark.slow
def test_cli_fetch_then_regenerate_from_the_cache(server: str, repo: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    env.pop("MCPGEN_SCHEMA_DIR", None)
    cli = [sys.executable, "-m", "mcpgen_codegen.cli"]
    fetched = subprocess.run(
        [*cli, "fetch-schemas", "--url-template", server],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert fetched.returncode == 0, fetched.stderr
    assert (tmp_path / "xdg" / "mcpgen" / "schemas" / "2026-07-28" / "schema.json").is_file()
    checked = subprocess.run(
        [*cli, "regenerate", "--check"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
