"""`mcpgen stubs`: the typed client module it writes passes mypy --strict and ruff as
written, calls the live server's tools with typed arguments and decodes their structured
output, and `--check` notices when the server's tools change."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcpgen import Client, ToolError
from tests import tooling
from tests.processes import EVERYTHING, everything_http
from tests.typecheck import shared_cache

SCHEMA_SERVER = Path(__file__).with_name("schema_server.py")
SERVER_EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
# Rules beyond ruff's defaults the module must pass too: the project's, less the naming
# ones (properties such as `contactMethod` stay as the server spells them) and the
# argument count (a method takes as many as its tool does).
RUFF_RULES = "E,F,W,I,B,UP,SIM,RUF,C4,PIE,RET,TID,PL"
RUFF_IGNORED = "PLR0913,PLR0917,PLR2004"


def ruff_configured(directory: Path) -> None:
    """Give `directory` a ruff configuration with those rules: the module follows the
    configuration of where it is written (without one, see test_fidelity)."""
    select = ", ".join(f'"{rule}"' for rule in RUFF_RULES.split(","))
    ignore = ", ".join(f'"{rule}"' for rule in RUFF_IGNORED.split(","))
    (directory / "ruff.toml").write_text(f"[lint]\nselect = [{select}]\nignore = [{ignore}]\n")


def stubs(out: Path, command: list[str], *options: str, extra_tool: bool = False) -> Any:
    ruff_configured(out.parent)
    env = {**os.environ, "STUBS_EXTRA_TOOL": "1" if extra_tool else "0"}
    argv = [sys.executable, "-m", "mcpgen", "stubs", "-o", str(out), *options, "--", *command]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=180, check=False)


def static_errors(directory: Path, module: str, *users: str) -> str:
    """mypy --strict on `module` and its `users`, ruff check and ruff format --check on
    `module`: their complaints."""
    ruff = [sys.executable, "-m", "ruff"]
    runs = [
        [sys.executable, "-m", "mypy", "--strict", *shared_cache(directory), module, *users],
        [*ruff, "check", "--select", RUFF_RULES, "--ignore", RUFF_IGNORED, module],
        [*ruff, "format", "--check", module],
    ]
    said = ""
    for argv in runs:
        done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            said += f"$ {' '.join(argv[2:4])}\n{done.stdout}{done.stderr}\n"
    return said


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # msgspec resolves the structs' annotations through it
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def schema_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("stubs") / "schema_tools.py"
    done = stubs(out, [sys.executable, str(SCHEMA_SERVER)])
    assert done.returncode == 0, done.stderr
    yield out
    sys.modules.pop("schema_tools", None)


USAGE = """from __future__ import annotations

from datetime import datetime

from mcpgen import Client
from schema_tools import Mode, PlanTripInputPerson, PlanTripOutput, Tools


async def use(client: Client) -> datetime:
    tools = Tools(client)
    trip: PlanTripOutput = await tools.plan_trip(
        traveller=PlanTripInputPerson(name="Ada"), mode=Mode.train, dates=[]
    )
    return trip.departs
"""

MISUSE = """from __future__ import annotations

from mcpgen import Client
from schema_tools import Mode, Tools


async def misuse(client: Client) -> str:
    tools = Tools(client)
    trip = await tools.plan_trip(traveller="Ada", mode=Mode.train, dates=[])
    await tools.import_(self_=True, count="three")
    return trip.departs
"""


@pytest.mark.slow
def test_module_is_typed_and_clean(schema_tools: Path) -> None:
    """The module passes mypy --strict and ruff as written; its methods are typed, so
    a wrong argument or a wrong use of the result is a mypy error."""
    directory = schema_tools.parent
    (directory / "usage.py").write_text(USAGE)
    assert static_errors(directory, "schema_tools.py", "usage.py") == ""
    (directory / "misuse.py").write_text(MISUSE)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *shared_cache(directory), "misuse.py"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in lines] == ["9", "10", "11"], done.stdout
    assert '"traveller" to "plan_trip"' in lines[0]
    assert '"count" to "import_"' in lines[1]
    assert '"datetime", expected "str"' in lines[2]


@pytest.mark.slow
def test_module_shape(schema_tools: Path) -> None:
    """Names: snake_case, keyword-safe, distinct; per-tool models; docstrings; header."""
    text = schema_tools.read_text()
    assert text.startswith('"""A typed client for the tools of stubs-schemas 2.1.0.')
    assert "datamodel-code-generator" in text.split('"""')[1]
    for method in ("plan_trip(", "plan_trip_2(", "get_user_info(", "import_(", "fail("):
        assert f"    async def {method}" in text, method
    assert "class PlanTripInputPoint(Struct):" in text  # each tool's $defs Point, apart
    assert "class PlanTripOutputPoint(Struct):" in text
    assert '"""Plans a trip for one traveller."""' in text
    assert "self, *, self_: bool, count: int | UnsetType = UNSET" in text


def test_calls_through_the_module(schema_tools: Path) -> None:
    """Typed arguments in (unset ones left out, renamed fields under their wire names),
    decoded output structs out, a tool error raised as ToolError."""
    from tests.stubs.schema_server import server

    module = load(schema_tools)
    departs = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)

    async def main() -> None:
        async with Client.memory(server) as client:
            tools = module.Tools(client)
            trip = await tools.plan_trip(
                traveller=module.PlanTripInputPerson(
                    name="Ada", home=module.PlanTripInputPoint(lat=51.6, lon=-0.2)
                ),
                mode=module.Mode.plane,
                dates=[departs],
                seat=module.Seat1(side=module.Side.left),
                class_="first",
            )
            assert isinstance(trip, module.PlanTripOutput)
            assert trip.id == "Ada:plane:first"
            assert trip.departs == departs
            assert trip.mode is module.Mode1.plane
            assert trip.legs[0] == module.Leg(
                start=module.PlanTripOutputPoint(x=52, y=0), hours=1.5
            )
            assert trip.legs[1].hours == 0.0  # `stops` was not sent: the server's default
            assert trip.note == "seat aisle"
            assert trip.link == "https://example.com/trips/1"

            seen = await tools.import_(self_=True)
            assert seen == module.ImportOutput(seen={"self": 1})
            plain = await tools.get_user_info()
            assert plain.content[0].text == "someone"
            assert (await tools.plan_trip_2()).content[0].text == "again"
            with pytest.raises(ToolError, match="no luck today") as failed:
                await tools.fail()
            assert failed.value.name == "fail" and failed.value.result.is_error is True

    asyncio.run(main())


@pytest.mark.slow
def test_check_notices_drift(tmp_path: Path, schema_tools: Path) -> None:
    """--check: exit 0 on the fresh module; exit 1 and a diff naming the new tool once
    the server has one more; the file is left as it was."""
    command = [sys.executable, str(SCHEMA_SERVER)]
    fresh = stubs(schema_tools, command, "--check")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    before = schema_tools.read_text()
    drifted = stubs(schema_tools, command, "--check", extra_tool=True)
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    assert "+    async def added_later(self) -> CallToolResult:" in drifted.stdout
    assert "drifted" in drifted.stderr
    assert schema_tools.read_text() == before
    missing = stubs(tmp_path / "absent.py", command, "--check")
    assert missing.returncode == 1 and not (tmp_path / "absent.py").exists()


@pytest.mark.slow
def test_everything_example(tmp_path: Path) -> None:
    """examples/everything.py over stdio: a clean module whose methods call the tools;
    the module written over Streamable HTTP is the same."""
    out = tmp_path / "everything_tools.py"
    command = [sys.executable, str(EVERYTHING)]
    done = stubs(out, command, "--class-name", "Everything")
    assert done.returncode == 0, done.stderr
    assert static_errors(tmp_path, out.name) == ""
    with everything_http(tmp_path / "http.log") as url:  # the same tools over HTTP
        argv = [sys.executable, "-m", "mcpgen", "stubs", url, "-o", str(out), "--check"]
        argv += ["--class-name", "Everything"]
        same = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    assert same.returncode == 0, same.stdout + same.stderr
    module = load(out)

    async def main() -> None:
        async with Client.stdio(command) as client:
            tools = module.Everything(client)
            hello = await tools.greet(name="Ada")
            assert hello.content[0].text == "Hello, Ada!"
            with pytest.raises(ToolError):
                await tools.test_error_handling()

    try:
        asyncio.run(main())
    finally:
        sys.modules.pop(out.stem, None)


@pytest.mark.slow
@pytest.mark.needs_node
def test_official_server_everything(tmp_path: Path) -> None:
    """The reference server-everything (TypeScript SDK) over stdio, output schemas included."""
    node = tooling.node22()
    package = tooling.npm_package(SERVER_EVERYTHING) / "@modelcontextprotocol" / "server-everything"
    manifest = json.loads((package / "package.json").read_text())
    entry = manifest["bin"]
    entry = entry if isinstance(entry, str) else entry["mcp-server-everything"]
    command = [node, str(package / entry), "stdio"]
    out = tmp_path / "reference_tools.py"
    done = stubs(out, command)
    assert done.returncode == 0, done.stderr
    assert static_errors(tmp_path, out.name) == ""
    module = load(out)

    async def main() -> None:
        async with Client.stdio(command) as client:
            tools = module.Tools(client)
            echoed = await tools.echo(message="hi")
            assert "hi" in echoed.content[0].text
            total = await tools.get_sum(a=2, b=3.5)
            assert "5.5" in total.content[0].text
            weather = await tools.get_structured_content(location=module.Location.chicago)
            assert isinstance(weather, module.GetStructuredContentOutput)
            assert isinstance(weather.temperature, float) and weather.conditions

    try:
        asyncio.run(main())
    finally:
        sys.modules.pop(out.stem, None)
