"""A module `mcpgen openapi` writes, generated from a document and imported."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from mcpgen.openapi import generate


def load_generated(document: Path, path: Path) -> tuple[str, ModuleType]:
    """The text generated from `document` (nothing refused), written to `path` and
    imported under the file's name (kept in sys.modules: msgspec resolves names there)."""
    text, refused = generate(str(document), path)
    assert refused == []
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return text, module
