"""Where schemas come from: a schema directory, verified by sha256; or a download.

Resolution order for the directory: an explicit `--schema-dir`, then the
`MCPGEN_SCHEMA_DIR` environment variable, then the user cache that
`mcpgen fetch-schemas` fills. Every file is checked against its pinned sha256 on
every load, so a stale or tampered file never reaches the generator.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from mcpgen_codegen.config import GenerationError, Pin, Pins

ENV_SCHEMA_DIR = "MCPGEN_SCHEMA_DIR"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcpgen" / "schemas"


def resolve_schema_dir(explicit: Path | None = None) -> Path:
    if explicit is not None:
        return explicit
    env = os.environ.get(ENV_SCHEMA_DIR)
    if env:
        return Path(env)
    return cache_dir()


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_verified(pin: Pin, schema_dir: Path) -> bytes:
    path = schema_dir / pin.local
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise GenerationError(
            f"schema for {pin.version} not found at {path}; point --schema-dir or "
            f"${ENV_SCHEMA_DIR} at a directory holding it, or run `mcpgen fetch-schemas`"
        ) from None
    digest = sha256_of(data)
    if digest != pin.sha256:
        raise GenerationError(
            f"{path}: sha256 {digest} does not match the pin {pin.sha256} for {pin.version}; "
            "refusing to generate from an unpinned schema"
        )
    return data


def load_schema(pin: Pin, schema_dir: Path) -> dict[str, Any]:
    data = read_verified(pin, schema_dir)
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise GenerationError(f"{schema_dir / pin.local}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise GenerationError(f"{schema_dir / pin.local}: top level is not an object")
    return doc


def fetch_schemas(
    pins: Pins,
    dest: Path,
    *,
    url_template: str | None = None,
    only: str | None = None,
    timeout: float = 30.0,
) -> list[str]:
    """Download every pinned schema into `dest`, verifying each sha256.

    A file already present with the right digest is kept. A download whose digest
    differs is refused and nothing is written for it. Returns one line per pin.
    """
    template = url_template or pins.url_template
    report = []
    for pin in pins.revisions:
        if only is not None and pin.version != only:
            continue
        target = dest / pin.local
        if target.is_file() and sha256_of(target.read_bytes()) == pin.sha256:
            report.append(f"{pin.version}: cached {target}")
            continue
        url = pin.url(template)
        if not url.startswith(("https://", "http://", "file://")):
            raise GenerationError(f"{pin.version}: refusing URL scheme of {url!r}")
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:  # scheme checked above
                data = resp.read()
        except (urllib.error.URLError, OSError) as exc:
            raise GenerationError(f"{pin.version}: download of {url} failed: {exc}") from None
        digest = sha256_of(data)
        if digest != pin.sha256:
            raise GenerationError(
                f"{pin.version}: {url} has sha256 {digest}, but the pin says {pin.sha256}; "
                "refusing it (upstream changed, or the download was tampered with)"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".fetch-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        report.append(f"{pin.version}: fetched {url} -> {target}")
    return report
