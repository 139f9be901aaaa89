"""The typed stubs of the six reference servers (issue 24): server-everything,
server-filesystem and server-memory from npm, mcp-server-time, -fetch and -git from
PyPI (in a virtualenv of their own in the test cache). Each module, written where no
ruff configuration applies, passes `mypy --strict` and a plain `ruff check`, and a
driver calling every one of its tools through it passes `mypy --strict` too and runs:
every call is made with typed arguments and, where the tool has an output schema,
decodes into the generated struct."""

from __future__ import annotations

import ast
import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client
from mcpgen.types import ElicitRequestParams, ElicitResult
from tests import tooling
from tests.stubs.test_stubs import load
from tests.typecheck import shared_cache

pytestmark = pytest.mark.slow

NPM_VERSION = "2026.8.31"


def _npm_server(name: str, *args: str) -> list[str]:
    package = f"@modelcontextprotocol/server-{name}"
    folder = tooling.npm_package(f"{package}@{NPM_VERSION}") / package
    entry = json.loads((folder / "package.json").read_text())["bin"]
    entry = entry if isinstance(entry, str) else next(iter(entry.values()))
    return [tooling.node22(), str(folder / entry), *args]


EVERYTHING = """
from mcpgen.types import CallToolResult, TextContent
from everything_tools import Location, MessageType, ResourceType, Tools


async def drive(tools: Tools, root: str) -> list[object]:
    results: list[object] = [
        await tools.echo(message="hi"),
        await tools.get_annotated_message(message_type=MessageType.success),
        await tools.get_env(),
        await tools.get_resource_links(count=2),
        await tools.get_resource_reference(resource_type=ResourceType.text, resource_id=1),
        await tools.get_sum(a=2, b=3.5),
        await tools.get_tiny_image(),
        await tools.gzip_file_as_resource(name="x.gz", data="data:text/plain;base64,aGk="),
        await tools.toggle_simulated_logging(),
        await tools.toggle_subscriber_updates(),
        await tools.trigger_long_running_operation(duration=0.2, steps=2),
        await tools.trigger_elicitation_request(),
        await tools.trigger_url_elicitation(url="https://example.com/sign-in"),
    ]
    # It runs only as a task (2025-11-25 `execution.taskSupport: "required"`): the client
    # task-augments the call, polls it and answers its elicitation (declined here).
    research = await tools.simulate_research_query(topic="owls", ambiguous=True)
    block = research.content[0]
    assert research.is_error is not True and isinstance(block, TextContent)
    assert "# Research Report: owls (User declined" in block.text, block.text
    results.append(research)
    weather = await tools.get_structured_content(location=Location.chicago)
    results.append(weather.temperature + weather.humidity)
    assert all(isinstance(r, CallToolResult) for r in results[:-1])
    return results
"""

FILESYSTEM = """
from fs_tools import Edit, SortBy, Tools


async def drive(tools: Tools, root: str) -> list[object]:
    note, other = f"{root}/note.txt", f"{root}/moved.txt"
    return [
        await tools.list_allowed_directories(),
        await tools.write_file(path=note, content="hello world"),
        await tools.read_file(path=note),
        await tools.read_text_file(path=note, head=1),
        await tools.read_multiple_files(paths=[note]),
        await tools.edit_file(path=note, edits=[Edit(old_text="world", new_text="there")]),
        await tools.create_directory(path=f"{root}/sub"),
        await tools.list_directory(path=root),
        await tools.list_directory_with_sizes(path=root, sort_by=SortBy.size),
        await tools.directory_tree(path=root),
        await tools.search_files(path=root, pattern="*.txt"),
        await tools.get_file_info(path=note),
        await tools.read_media_file(path=f"{root}/pixel.png"),
        await tools.move_file(source=note, destination=other),
    ]
"""

MEMORY = """
from memory_tools import Deletion, Entity, Observation, Relation, Tools


async def drive(tools: Tools, root: str) -> list[object]:
    ada = Entity(name="Ada", entity_type="person", observations=["wrote notes"])
    engine = Entity(name="Engine", entity_type="machine", observations=[])
    link = Relation(from_="Ada", to="Engine", relation_type="programmed")
    return [
        await tools.create_entities(entities=[ada, engine]),
        await tools.create_relations(relations=[link]),
        await tools.add_observations(
            observations=[Observation(entity_name="Ada", contents=["was first"])]
        ),
        await tools.read_graph(),
        await tools.search_nodes(query="Ada"),
        await tools.open_nodes(names=["Ada"]),
        await tools.delete_observations(
            deletions=[Deletion(entity_name="Ada", observations=["was first"])]
        ),
        await tools.delete_relations(relations=[link]),
        await tools.delete_entities(entity_names=["Engine"]),
    ]
"""

TIME = """
from time_tools import Tools


async def drive(tools: Tools, root: str) -> list[object]:
    now = await tools.get_current_time(timezone="Europe/Lisbon")
    converted = await tools.convert_time(
        source_timezone="Europe/Lisbon", time="09:30", target_timezone="Asia/Tokyo"
    )
    return [now, converted]
"""

FETCH = """
from fetch_tools import Tools


async def drive(tools: Tools, root: str) -> list[object]:
    return [await tools.fetch(url=root, max_length=500)]
"""

GIT = """
from pathlib import Path

from git_tools import Tools


async def drive(tools: Tools, root: str) -> list[object]:
    Path(root, "a.txt").write_text("one\\n")
    results: list[object] = [
        await tools.git_status(repo_path=root),
        await tools.git_add(repo_path=root, files=["a.txt"]),
        await tools.git_diff_staged(repo_path=root),
        await tools.git_commit(repo_path=root, message="add a"),
    ]
    Path(root, "a.txt").write_text("two\\n")
    results += [
        await tools.git_diff_unstaged(repo_path=root),
        await tools.git_diff(repo_path=root, target="HEAD"),
        await tools.git_reset(repo_path=root),
        await tools.git_log(repo_path=root, max_count=5),
        await tools.git_create_branch(repo_path=root, branch_name="side"),
        await tools.git_checkout(repo_path=root, branch_name="side"),
        await tools.git_show(repo_path=root, revision="HEAD"),
        await tools.git_branch(repo_path=root, branch_type="local"),
    ]
    return results
"""


def _git_repo(path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for key, value in (("user.name", "Tester"), ("user.email", "tester@example.com")):
        subprocess.run(["git", "-C", str(path), "config", key, value], check=True)
    subprocess.run(
        ["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", "start"], check=True
    )


@pytest.fixture(scope="module")
def page() -> Iterator[str]:
    """A page on a loopback HTTP server, for mcp-server-fetch."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body><h1>Owls</h1><p>Owls hunt at night.</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/owls.html"
    server.shutdown()


# name -> (module, driver, (command, env, the driver's root) from a scratch directory)
Setup = Callable[[Path, str], tuple[list[str], dict[str, str], str]]


def _everything(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    return _npm_server("everything", "stdio"), {}, ""


def _filesystem(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    root = scratch / "files"
    root.mkdir()
    (root / "pixel.png").write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    return _npm_server("filesystem", str(root.resolve())), {}, str(root.resolve())


def _memory(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    return _npm_server("memory"), {"MEMORY_FILE_PATH": str(scratch / "memory.jsonl")}, ""


def _python_server(name: str, *args: str) -> list[str]:
    return [str(tooling.reference_servers() / f"mcp-server-{name}"), *args]


def _time(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    return _python_server("time", "--local-timezone", "UTC"), {}, ""


def _fetch(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    return _python_server("fetch", "--ignore-robots-txt", "--allow-private-ips"), {}, page


def _git(scratch: Path, page: str) -> tuple[list[str], dict[str, str], str]:
    repo = scratch / "repo"
    _git_repo(repo)
    return _python_server("git", "--repository", str(repo)), {}, str(repo)


SERVERS: dict[str, tuple[str, str, Setup]] = {
    "everything": ("everything_tools", EVERYTHING, _everything),
    "filesystem": ("fs_tools", FILESYSTEM, _filesystem),
    "memory": ("memory_tools", MEMORY, _memory),
    "time": ("time_tools", TIME, _time),
    "fetch": ("fetch_tools", FETCH, _fetch),
    "git": ("git_tools", GIT, _git),
}


def _decline(params: ElicitRequestParams) -> ElicitResult:
    return ElicitResult(action="decline")


def _checked(directory: Path, *files: str) -> str:
    """mypy --strict on `files` and a plain `ruff check` (no configuration) of the module."""
    said = ""
    mypy = [sys.executable, "-m", "mypy", "--strict", *shared_cache(directory), *files]
    ruff = [sys.executable, "-m", "ruff", "check", "--no-cache", files[0]]
    for argv in (mypy, ruff):
        done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            said += done.stdout + done.stderr
    return said


def _methods(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    (tools,) = (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tools")
    return {n.name for n in tools.body if isinstance(n, ast.AsyncFunctionDef) and n.name != "_call"}


NODE = ("everything", "filesystem", "memory")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.needs_node] if name in NODE else [])
        for name in sorted(SERVERS)
    ],
)
def test_reference_server_stubs(name: str, tmp_path: Path, page: str) -> None:
    module_name, driver, setup = SERVERS[name]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command, env, root = setup(scratch, page)
    out = tmp_path / "stubs"
    out.mkdir()  # no ruff configuration applies here (nor above: tmp_path)
    module = out / f"{module_name}.py"
    environ = {**os.environ, **env}
    argv = [sys.executable, "-m", "mcpgen", "stubs", "-o", str(module), "--", *command]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, env=environ
    )
    assert done.returncode == 0, done.stderr
    (out / f"drive_{name}.py").write_text(driver.lstrip())
    assert _checked(out, module.name, f"drive_{name}.py") == ""
    called = {call.split("(")[0] for call in driver.split("tools.")[1:]}
    assert called == _methods(module), "the driver calls every tool"
    sys.path.insert(0, str(out))
    try:
        load(module)
        drive = load(out / f"drive_{name}.py").drive

        async def main() -> list[object]:
            # What `mcpgen stubs` declared (elicitation, both modes): the same tools.
            async with Client.stdio(
                command,
                env=environ,
                on_elicitation=_decline,
                elicitation_modes=("form", "url"),
                probe_timeout=30,  # a Python server's start-up counts against the probe
            ) as client:
                return list(await drive(load_tools(client), root))

        def load_tools(client: Client) -> Any:
            return sys.modules[module_name].Tools(client)

        results = asyncio.run(main())
    finally:
        sys.path.remove(str(out))
        sys.modules.pop(module_name, None)
        sys.modules.pop(f"drive_{name}", None)
    assert len(results) >= len(called) - 1  # everything's weather is one entry
