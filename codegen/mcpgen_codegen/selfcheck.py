"""Step 9: import the freshly rendered package and build a decoder for every type.

Runs in a child interpreter with the rendered files first on `sys.path`, so neither
the committed `generated/` nor this process's imports can mask a broken module.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mcpgen_codegen.config import GenerationError

_CHECK = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
import msgspec
plan = json.loads(sys.argv[2])
problems, checked = [], 0
for module, names in plan.items():
    mod = importlib.import_module("mcpgen_types." + module)
    if not mod.__file__.startswith(sys.argv[1]):
        problems.append(f"{module}: imported from {mod.__file__}, not the rendered tree")
        continue
    for name in names:
        if name in mod.CONTEXT_DEPENDENT:
            continue
        try:
            msgspec.json.Decoder(getattr(mod, name))
            checked += 1
        except Exception as exc:
            problems.append(f"{module}.{name}: {type(exc).__name__}: {exc}")
    for method, info in mod.METHODS.items():
        for part in (info.message, info.params, info.result):
            if part is None:
                continue
            try:
                msgspec.json.Decoder(part)
            except Exception as exc:
                problems.append(f"{module}.METHODS[{method!r}]: {exc}")
print(json.dumps({"checked": checked, "problems": problems}))
"""


def self_check(files: dict[str, str], plan: dict[str, list[str]]) -> int:
    """`files`: package-relative path -> source; `plan`: module -> type names.

    Returns how many definitions were proven decodable; raises on any failure.
    """
    with tempfile.TemporaryDirectory(prefix="mcpgen-selfcheck-") as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        proc = subprocess.run(
            [sys.executable, "-c", _CHECK, str(root), json.dumps(plan)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    if proc.returncode != 0:
        raise GenerationError(f"generated code does not import:\n{proc.stderr.strip()}")
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    if report["problems"]:
        raise GenerationError("self-check failed:\n  " + "\n  ".join(report["problems"]))
    return int(report["checked"])
