"""The public API is `mcpgen.__all__` and the `__all__` of the public subpackages: sorted,
importable, and every export documented by a docstring of its own (the API reference
renders these)."""

from __future__ import annotations

import importlib
import inspect
from functools import cache
from types import ModuleType
from typing import Any

import pytest

import mcpgen

# The packages whose `__all__` is public API (docs/reference/ renders each of them).
PUBLIC = [
    "mcpgen",
    "mcpgen.server",
    "mcpgen.client",
    "mcpgen.auth",
    "mcpgen.middleware",
    "mcpgen.proxy",
    "mcpgen.stores",
    "mcpgen.stores.redis",
    "mcpgen.stubs",
    "mcpgen.transports",
    # The generated types (docs/reference/types): structs and type aliases of each revision.
    "mcpgen_types",
    "mcpgen_types.ext_apps",
    "mcpgen_types.ext_tasks",
    "mcpgen_types.v2024_11_05",
    "mcpgen_types.v2025_03_26",
    "mcpgen_types.v2025_06_18",
    "mcpgen_types.v2025_11_25",
    "mcpgen_types.v2026_07_28",
]


def test_all_is_sorted_and_resolves() -> None:
    assert mcpgen.__all__ == sorted(mcpgen.__all__)
    for name in mcpgen.__all__:
        assert hasattr(mcpgen, name), name


@cache
def _griffe_package(top: str) -> Any:
    import griffe  # mkdocstrings' reader (the docs extra): what the reference shows

    return griffe.load(top, search_paths=["runtime", "generated"], resolve_aliases=True)


def _griffe_module(name: str) -> Any:
    """griffe's view of a module, from one load of its top-level package (a load per
    subpackage read the same files again: seconds apiece)."""
    top, _, rest = name.partition(".")
    package = _griffe_package(top)
    return package[rest] if rest else package


def own_docstring(module: ModuleType, name: str) -> str:
    """The docstring written for this very object: a class's or function's own
    `__doc__` (never one inherited from a base class, as `inspect.getdoc` would give),
    or, for a constant or a type alias, the string right after its assignment."""
    value = getattr(module, name)
    if inspect.isclass(value):
        return str(value.__dict__.get("__doc__") or "")
    if inspect.isroutine(value):
        return value.__doc__ or ""
    member = _griffe_module(module.__name__)[name]
    docstring = member.docstring
    return docstring.value if docstring is not None else ""


def test_own_docstring_ignores_inherited_ones() -> None:
    class Base:
        """Documented."""

    class Child(Base):
        pass

    holder = ModuleType("holder")
    holder.Child = Child  # type: ignore[attr-defined]
    assert inspect.getdoc(Child) == "Documented."
    assert own_docstring(holder, "Child") == ""


@pytest.mark.parametrize("package", PUBLIC)
def test_every_export_has_its_own_docstring(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__, f"{package} has no module docstring"
    undocumented = [
        name
        for name in module.__all__
        if name != "__version__" and not own_docstring(module, name).strip()
    ]
    assert undocumented == []


def test_importing_mcpgen_pulls_in_no_generator_or_cli_dependency() -> None:
    import subprocess
    import sys

    heavy = ("jinja2", "typer", "mcpgen_codegen", "httpx", "uvicorn")
    code = (
        f"import sys, mcpgen, mcpgen.types; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_side_packages_export_the_same_objects_as_mcpgen() -> None:
    """`mcpgen.server` and `mcpgen.client` each hold one side of the API; `mcpgen`
    re-exports both, the very same objects, and nothing of one side is in the other."""
    import mcpgen.client
    import mcpgen.server

    server, client = set(mcpgen.server.__all__), set(mcpgen.client.__all__)
    assert mcpgen.server.__all__ == sorted(mcpgen.server.__all__)
    assert mcpgen.client.__all__ == sorted(mcpgen.client.__all__)
    assert not server & client
    assert server | client <= set(mcpgen.__all__)
    for package, names in ((mcpgen.server, server), (mcpgen.client, client)):
        assert [n for n in names if getattr(package, n) is not getattr(mcpgen, n)] == []
    assert {"Server", "Context", "Middleware"} <= server
    assert {"Client", "ToolTask", "ClientMiddleware", "RetryPolicy"} <= client


def test_a_server_loads_no_client_module() -> None:
    """Importing `mcpgen` and its server side and building a `Server` leaves the client
    package and the client core unloaded (a server does not pay for the client); the
    first use of a client name loads `mcpgen.client`."""
    import subprocess
    import sys

    code = (
        "import sys, mcpgen\n"
        "from mcpgen.server import Server\n"
        "Server('s')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('mcpgen.client', 'mcpgen._client'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
    code = "import mcpgen; mcpgen.Client; import sys; print('mcpgen.client' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True"
