"""Measure datamodel-code-generator's msgspec output against one MCP schema revision.

Why: mcpgen needs every ``$defs`` entry of every MCP revision as a msgspec decode
target that round-trips the upstream examples losslessly, under names that stay
stable across revisions.  This script checks how far datamodel-code-generator
(``datamodel-codegen --output-model-type msgspec.Struct``) gets on that.  It
backs docs/decisions/0001-spec-types-not-from-datamodel-code-generator.md.

Usage (in a throwaway venv, NOT the project's environment)::

    python3 -m venv /tmp/dcg-venv
    /tmp/dcg-venv/bin/pip install datamodel-code-generator==0.89.0 msgspec
    /tmp/dcg-venv/bin/python bench/dcg_compare.py --schema-dir ../shared/mcp-spec

``--schema-dir`` is either a folder of revisions (``<dir>/<revision>/schema.json``
plus ``<dir>/<revision>/examples/<DefName>/*.json``) or one revision folder.
The schema and examples are only read in place; generated code goes to a
temporary directory that is removed afterwards.  Nothing is written to the repo
unless ``--json-out`` names a file.

For each generator configuration (``--config``, default: all) it reports:

a. decode targets: for each ``$defs`` name, whether the generated module has a
   class/alias of that name and whether ``msgspec.json.Decoder(T)`` accepts it;
   failures are grouped by the first clause of msgspec's error message.
b. examples: decode each example file with its folder's type, re-encode, and
   compare ``json.loads`` of input and output (strictly: ``True`` != ``1`` and
   ``1`` != ``1.0``).  Differences are classified (dropped ``_meta`` key,
   dropped key, added key, changed value).
c. ``_meta``: the fields of each ``*MetaObject`` type and which keys survive a
   round trip of every ``_meta`` object found in the examples (plus one
   vendor-prefixed key); generated names that are not ``$defs`` names, with
   numbered ones (``Error1``) and generic ones (``Model``) flagged.
d. generation wall time (min over ``--repeat`` runs, including interpreter
   start-up) and generated line count.

Configurations: ``plain`` (the obvious command), ``primary-first`` (keeps
``$defs`` names clean, inline enums as Literal, tagged unions requested),
``recommended`` (what ``datamodel-codegen --recommend-options`` proposes for
this schema) and the counterfactual ``plain+JSONValue-as-Any`` (the ``plain``
output with the recursive ``JSONValue`` forward references replaced by ``Any``,
to show how many failures that one problem accounts for).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec

TOOL_VERSION_EXPECTED = "0.89.0"
DEFAULT_REVISION = "2026-07-28"

# Flags shared by every configuration (input/output are added per run).
BASE = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "msgspec.Struct",
    "--target-python-version",
    "3.11",
    "--disable-timestamp",
]

CONFIGS: dict[str, list[str]] = {
    # The obvious invocation, with annotated constraints and the fast formatter.
    "plain": ["--use-annotated", "--field-constraints", "--formatters", "builtin"],
    # Same, keeping $defs names clean and writing inline enums as Literal;
    # tagged unions asked for explicitly (only helps where the schema has a
    # discriminator).
    "primary-first": [
        "--use-annotated",
        "--field-constraints",
        "--formatters",
        "builtin",
        "--naming-strategy",
        "primary-first",
        "--enum-field-as-literal",
        "all",
        "--use-msgspec-tagged-unions",
    ],
    # What `datamodel-codegen --recommend-options` proposes for this schema.
    "recommended": [
        "--preset",
        "standard-py311-20261027",
        "--naming-strategy",
        "full-path",
        "--enum-field-as-literal",
        "all",
    ],
}


# Counterfactuals: post-process the generated source of a configuration to see
# how much one failure class accounts for.  Not something we would ship.
def _patch_recursive_json(src: str) -> str:
    """Replace the string forward refs to the recursive JSONValue alias by Any."""
    return re.sub(r"""(["'])JSONValue\1""", "Any", src)


PATCHES = {"plain+JSONValue-as-Any": ("plain", _patch_recursive_json)}

GENERIC_NAMES = {
    "Model",
    "Params",
    "Result",
    "Error",
    "Data",
    "Item",
    "Items",
    "Content",
    "Context",
    "Argument",
    "Type",
    "Kind",
    "Value",
}


# --------------------------------------------------------------------------- helpers


def find_revision(schema_dir: Path, revision: str) -> Path:
    if (schema_dir / "schema.json").is_file():
        return schema_dir
    rev = schema_dir / revision
    if not (rev / "schema.json").is_file():
        sys.exit(f"no schema.json in {schema_dir} or {rev}")
    return rev


def tool_version() -> str:
    try:
        return metadata.version("datamodel-code-generator")
    except Exception:  # pragma: no cover - reported, not fatal
        return "unknown"


def generate(
    schema: Path, out: Path, flags: list[str], repeat: int
) -> tuple[list[float], list[str], str]:
    cmd_tail = ["--input", str(schema), *BASE, "--output", str(out), *flags]
    argv = [sys.executable, "-m", "datamodel_code_generator", *cmd_tail]
    times = []
    stderr = ""
    for _ in range(max(1, repeat)):
        if out.is_dir():
            shutil.rmtree(out)
        elif out.exists():
            out.unlink()
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - t0)
        stderr = proc.stderr
        if proc.returncode != 0:
            raise RuntimeError(f"generation failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return times, ["datamodel-codegen", *cmd_tail], stderr


def load_generated(out: Path, modname: str) -> tuple[dict[str, Any], list[Path]]:
    """Import the generated file or package; return (namespace, source files)."""
    importlib.invalidate_caches()
    if out.is_dir():
        spec = importlib.util.spec_from_file_location(
            modname, out / "__init__.py", submodule_search_locations=[str(out)]
        )
        files = sorted(out.rglob("*.py"))
    else:
        spec = importlib.util.spec_from_file_location(modname, out)
        files = [out]
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    ns: dict[str, Any] = {}
    if out.is_dir():
        for info in pkgutil.walk_packages([str(out)], prefix=modname + "."):
            sub = importlib.import_module(info.name)
            for k, v in vars(sub).items():
                ns.setdefault(k, v)
    ns.update(vars(mod))
    return ns, files


def defined_names(files: list[Path]) -> list[str]:
    """Top-level classes and aliases written by the generator, in source order."""
    names: list[str] = []
    for f in files:
        tree = ast.parse(f.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                names.append(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.append(node.target.id)
            elif isinstance(node, ast.Assign):
                names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
            elif type(node).__name__ == "TypeAlias":  # `type X = ...` (3.12+)
                names.append(node.name.id)
    return names


def error_class(exc: BaseException) -> str:
    msg = str(exc).split(" - type", 1)[0].split("\n", 1)[0]
    msg = re.sub(r"`[^`]*`", "`...`", msg)
    return f"{type(exc).__name__}: {msg}"


def strict_diff(a: Any, b: Any, path: tuple = ()) -> list[tuple[tuple, str]]:
    """Differences between original ``a`` and re-encoded ``b`` as (path, kind)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in a.keys() - b.keys():
            out.append(((*path, k), "dropped"))
        for k in b.keys() - a.keys():
            out.append(((*path, k), "added"))
        for k in a.keys() & b.keys():
            out.extend(strict_diff(a[k], b[k], (*path, k)))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [(path, "changed")]
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(strict_diff(x, y, (*path, i)))
        return out
    if type(a) is not type(b) or a != b:
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        return [(path, "number type" if numeric and a == b else "changed")]
    return []


def diff_kind(path: tuple, kind: str) -> str:
    if kind == "dropped" and "_meta" in path[:-1]:
        return "dropped _meta key"
    if kind == "dropped" and path and path[-1] == "_meta":
        return "dropped whole _meta"
    return {
        "dropped": "dropped key",
        "added": "added key",
        "changed": "changed value",
        "number type": "int re-encoded as float",
    }[kind]


def fmt_path(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "."


def walk_meta(obj: Any, acc: list[dict]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "_meta" and isinstance(v, dict):
                acc.append(v)
            walk_meta(v, acc)
    elif isinstance(obj, list):
        for v in obj:
            walk_meta(v, acc)


# --------------------------------------------------------------------------- measure


def measure(
    rev: Path, name: str, flags: list[str], repeat: int, patch: Any = None
) -> dict[str, Any]:
    schema_path = rev / "schema.json"
    defs = sorted(json.loads(schema_path.read_text())["$defs"])
    with tempfile.TemporaryDirectory(prefix="dcg-compare-") as tmp:
        out = Path(tmp) / "models.py"
        times, cmd, stderr = generate(schema_path, out, flags, repeat)
        if patch is not None:
            for f in [out] if out.is_file() else sorted(out.rglob("*.py")):
                f.write_text(patch(f.read_text()))
        modname = "_dcg_models_" + re.sub(r"\W", "_", name)
        ns, files = load_generated(out, modname)
        lines = sum(len(f.read_text().splitlines()) for f in files)
        written = defined_names(files)
        gen_warnings = sorted(
            {
                m.group(1)
                for m in re.finditer(
                    r"UserWarning: (msgspec cannot decode the union [^:]+):", stderr
                )
            }
        )

        # a. decode targets
        written_set = set(written)
        renamed_defs: dict[str, str] = {}
        for d in defs:
            if d not in ns:
                cands = [n for n in (f"Model{d}", f"{d}Model") if n in written_set]
                if len(cands) == 1:
                    renamed_defs[d] = cands[0]
        targets: dict[str, Any] = {}
        failures: dict[str, str] = {}
        for d in defs:
            t = ns.get(d, ns.get(renamed_defs.get(d, ""), None))
            if d not in ns and d not in renamed_defs:
                failures[d] = "missing: no class/alias of this name"
                continue
            try:
                msgspec.json.Decoder(t)
            except Exception as exc:  # every kind is classified
                failures[d] = error_class(exc)
                continue
            targets[d] = t

        # b. examples
        ex_root = rev / "examples"
        example_files = sorted(ex_root.glob("*/*.json")) if ex_root.is_dir() else []
        equal, different, failed = [], [], []
        loose_equal = 0  # plain `==` of the json.loads results (1 == 1.0)
        diff_counter: Counter[str] = Counter()
        fail_counter: Counter[str] = Counter()
        all_meta: list[dict] = []
        for f in example_files:
            d = f.parent.name
            raw = f.read_bytes()
            orig = json.loads(raw)
            walk_meta(orig, all_meta)
            rel = f"{d}/{f.name}"
            if d not in targets:
                reason = "no usable decode target" if d in defs else "folder is not a $defs name"
                failed.append((rel, reason))
                fail_counter[reason] += 1
                continue
            try:
                obj = msgspec.json.decode(raw, type=targets[d])
                back = json.loads(msgspec.json.encode(obj))
            except Exception as exc:
                reason = error_class(exc)
                failed.append((rel, str(exc)[:160]))
                fail_counter[reason] += 1
                continue
            diffs = strict_diff(orig, back)
            loose_equal += orig == back
            if not diffs:
                equal.append(rel)
            else:
                kinds = sorted({diff_kind(p, k) for p, k in diffs})
                for k in kinds:
                    diff_counter[k] += 1
                different.append((rel, kinds, [f"{k} {fmt_path(p)}" for p, k in diffs][:6]))

        # c. _meta behaviour
        meta_report = {}
        probe_key = "com.example/trace-id"
        for d in [x for x in defs if x.endswith("MetaObject")]:
            entry: dict[str, Any] = {}
            t = targets.get(d)
            if t is None:
                entry["status"] = failures.get(d, "missing")
                meta_report[d] = entry
                continue
            if isinstance(t, type) and issubclass(t, msgspec.Struct):
                entry["fields"] = [f.encode_name for f in msgspec.structs.fields(t)]
                entry["forbid_unknown_fields"] = t.__struct_config__.forbid_unknown_fields
            else:
                entry["type"] = repr(t)
            decoded = 0
            dropped: Counter[str] = Counter()
            for m in all_meta:
                candidate = {**m, probe_key: "t-1"}
                try:
                    back = json.loads(
                        msgspec.json.encode(msgspec.json.decode(json.dumps(candidate), type=t))
                    )
                except Exception:  # does not fit this type
                    continue
                decoded += 1
                for k in candidate.keys() - back.keys():
                    dropped[k] += 1
            entry["example_meta_objects_decoded"] = f"{decoded}/{len(all_meta)}"
            entry["keys_dropped"] = dict(dropped.most_common())
            meta_report[d] = entry

        invented = [n for n in written if n not in set(defs)]
        numbered = [n for n in invented if re.search(r"\d+$", n)]
        generic = [n for n in invented if n in GENERIC_NAMES]

        sys.modules.pop(modname, None)

    return {
        "config": name,
        "command": cmd,
        "tool_version": tool_version(),
        "msgspec_version": msgspec.__version__,
        "python": sys.version.split()[0],
        "generation_seconds_min": round(min(times), 3),
        "generation_seconds_all": [round(t, 3) for t in times],
        "generated_files": len(files),
        "generated_lines": lines,
        "generator_union_warnings": gen_warnings,
        "defs_total": len(defs),
        "defs_present": sum(d in ns for d in defs),
        "defs_renamed": renamed_defs,
        "defs_usable": len(targets),
        "defs_usable_own_name": sum(d in ns for d in targets),
        "defs_failures": failures,
        "defs_failure_classes": dict(Counter(failures.values()).most_common()),
        "examples_total": len(example_files),
        "examples_equal": len(equal),
        "examples_equal_loose": loose_equal,
        "examples_different": len(different),
        "examples_failed": len(failed),
        "examples_diff_kinds": dict(diff_counter.most_common()),
        "examples_fail_classes": dict(fail_counter.most_common()),
        "examples_different_detail": different,
        "examples_failed_detail": failed,
        "meta": meta_report,
        "names_written": len(written),
        "names_not_in_defs": invented,
        "names_numbered": numbered,
        "names_generic": generic,
    }


def print_report(r: dict[str, Any], verbose: bool) -> None:
    p = print
    p(f"\n=== config: {r['config']} ===")
    p("command: " + " ".join(r["command"]))
    p(
        f"datamodel-code-generator {r['tool_version']}, msgspec {r['msgspec_version']}, "
        f"python {r['python']}"
    )
    p(
        f"generation: {r['generation_seconds_min']} s (min of {r['generation_seconds_all']}), "
        f"{r['generated_files']} file(s), {r['generated_lines']} lines"
    )
    p(f"generator's own warnings about undecodable unions: {len(r['generator_union_warnings'])}")
    p(
        f"[a] $defs present under their own name: {r['defs_present']}/{r['defs_total']}; "
        f"renamed (found as Model<Name>): {len(r['defs_renamed'])}"
    )
    p(
        f"    usable decode targets: {r['defs_usable']}/{r['defs_total']} "
        f"({r['defs_usable_own_name']} under their own name)"
    )
    for cls, n in r["defs_failure_classes"].items():
        p(f"      {n:3d}  {cls}")
    for d, why in sorted(r["defs_failures"].items()):
        p(f"      - {d}: {why}")
    if r["defs_renamed"]:
        p(f"      renamed $defs: {r['defs_renamed']}")
    p(
        f"[b] examples: {r['examples_total']} total; decoded and equal {r['examples_equal']}, "
        f"decoded but different {r['examples_different']}, failed {r['examples_failed']} "
        f"(equal under plain ==, where 1 == 1.0: {r['examples_equal_loose']})"
    )
    p(f"      difference kinds (examples affected): {r['examples_diff_kinds']}")
    p(f"      failure classes: {r['examples_fail_classes']}")
    for rel, _kinds, detail in r["examples_different_detail"] if verbose else []:
        p(f"      ~ {rel}: {', '.join(detail)}")
    for rel, why in r["examples_failed_detail"] if verbose else []:
        p(f"      x {rel}: {why}")
    p("[c] _meta types:")
    for d, e in r["meta"].items():
        p(f"      {d}: {json.dumps(e)}")
    p(
        f"    names written: {r['names_written']}; "
        f"not a $defs name: {len(r['names_not_in_defs'])}; "
        f"numbered: {r['names_numbered']}; generic: {r['names_generic']}"
    )
    if verbose:
        p(f"    invented names: {r['names_not_in_defs']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument(
        "--schema-dir",
        type=Path,
        required=True,
        help="folder of MCP revisions (or one revision folder)",
    )
    ap.add_argument("--revision", default=DEFAULT_REVISION)
    ap.add_argument(
        "--config",
        action="append",
        choices=sorted(CONFIGS) + sorted(PATCHES),
        help="configuration(s) to run (default: all)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="generation runs to time")
    ap.add_argument("--json-out", type=Path, help="also write the full results as JSON")
    ap.add_argument("-q", "--quiet", action="store_true", help="omit per-example detail")
    args = ap.parse_args()

    rev = find_revision(args.schema_dir.resolve(), args.revision)
    if tool_version() != TOOL_VERSION_EXPECTED:
        print(
            f"note: measured tool version is {tool_version()}, the decision record used "
            f"{TOOL_VERSION_EXPECTED}",
            file=sys.stderr,
        )
    results = []
    for name in args.config or list(CONFIGS) + list(PATCHES):
        if name in PATCHES:
            base, patch = PATCHES[name]
            r = measure(rev, name, CONFIGS[base], args.repeat, patch)
        else:
            r = measure(rev, name, CONFIGS[name], args.repeat)
        print_report(r, verbose=not args.quiet)
        results.append(r)

    print("\n=== summary ===")
    print(
        f"{'config':22} {'own names':>9} {'usable defs':>12} {'examples equal':>15} "
        f"{'different':>10} {'failed':>7} {'gen s':>6} {'lines':>6} {'numbered':>9}"
    )
    for r in results:
        print(
            f"{r['config']:22} {r['defs_present']:>9} {r['defs_usable']:>5}/{r['defs_total']:<6} "
            f"{r['examples_equal']:>8}/{r['examples_total']:<6} {r['examples_different']:>10} "
            f"{r['examples_failed']:>7} {r['generation_seconds_min']:>6} "
            f"{r['generated_lines']:>6} {len(r['names_numbered']):>9}"
        )
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
