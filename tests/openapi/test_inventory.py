"""OpenAPI → MCP on a real API (issue 26): a FastAPI application's own openapi.json →
`mcpgen openapi` → a module served by mcpgen → called by mcpgen's client in both eras;
the API sees exactly the requests expected."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn

from mcpgen import Client, Server
from mcpgen.openapi import ApiAuth, generate
from tests.conftest import REPO
from tests.openapi import inventory_api
from tests.openapi.generated import load_generated
from tests.transports.httpharness import running
from tests.typecheck import shared_cache

ERAS = ("modern", "legacy")


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    """The inventory API under uvicorn on a loopback port."""
    config = uvicorn.Config(inventory_api.app, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    with running(server) as base:
        yield base


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    folder = tmp_path_factory.mktemp("openapi")
    spec = folder / "inventory.json"
    spec.write_text(json.dumps(inventory_api.app.openapi()))
    return load_generated(spec, folder / "inventory_tools.py")[1]


def build(module: ModuleType, base: str, key: str | None = inventory_api.API_KEY) -> Server:
    server = Server("inventory-mcp", "1.0")
    secrets = {"APIKeyHeader": key} if key else {}
    module.register(server, module.Api(base, module.SCHEMES, auth=ApiAuth(secrets=secrets)))
    return server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.mark.parametrize("era", ERAS)
def test_tools_match_the_operations(module: ModuleType, upstream: str, era: str) -> None:
    async def main() -> None:
        async with Client.memory(build(module, upstream), era=era) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert set(tools) == {"list_items", "get_item", "create_item", "delete_item"}
            listing = tools["list_items"]
            props = listing.input_schema["properties"]
            assert set(props) == {"category", "limit"}
            assert listing.input_schema.get("required", []) == []
            assert props["limit"]["default"] == 10
            assert "List the items" in listing.description
            assert listing.annotations.read_only_hint is True
            assert tools["delete_item"].annotations.destructive_hint is True
            assert tools["create_item"].input_schema["required"] == ["body"]
            out = tools["get_item"].output_schema
            assert out is not None and {"id", "name", "category", "price"} <= set(
                out["required"] if "required" in out else out["$defs"]["Item"]["required"]
            )

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_calls_become_the_expected_requests(module: ModuleType, upstream: str, era: str) -> None:
    async def main() -> None:
        inventory_api.SEEN.clear()
        async with Client.memory(build(module, upstream), era=era) as client:
            page = await client.call_tool("list_items", {"category": "garden", "limit": 5})
            assert page.is_error is not True
            assert page.structured_content["total"] == 1
            assert page.structured_content["items"][0]["dimensions"] == {
                "width_cm": 40.0,
                "height_cm": 150.0,
            }
            one = await client.call_tool("get_item", {"item_id": 1, "x_trace_id": "t-1"})
            assert one.structured_content["name"] == "anvil"
            new = {"name": "whisk", "category": "kitchen", "price": 3.5}
            made = await client.call_tool("create_item", {"body": new})
            assert made.structured_content["id"] >= 3
            gone = await client.call_tool("delete_item", {"item_id": made.structured_content["id"]})
            assert gone.is_error is not True
        seen = [(s["method"], s["path"], s["query"]) for s in inventory_api.SEEN]
        assert seen == [
            ("GET", "/items", "category=garden&limit=5"),
            ("GET", "/items/1", ""),
            ("POST", "/items", ""),
            ("DELETE", f"/items/{made.structured_content['id']}", ""),
        ]
        assert inventory_api.SEEN[1]["trace"] == "t-1"  # a header parameter
        assert json.loads(inventory_api.SEEN[2]["body"]) == new
        assert inventory_api.SEEN[2]["key"] == inventory_api.API_KEY
        assert inventory_api.SEEN[0]["key"] is None  # no security on the listing: no key

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_api_errors_are_error_results_with_status_and_body(
    module: ModuleType, upstream: str, era: str
) -> None:
    async def main() -> None:
        async with Client.memory(build(module, upstream, key="wrong"), era=era) as client:
            missing = await client.call_tool("get_item", {"item_id": 999})
            assert missing.is_error is True
            text = missing.content[0].text
            assert "getItem: HTTP 404 Not Found" in text and "no item 999" in text
            denied = await client.call_tool(
                "create_item", {"body": {"name": "x", "category": "tools", "price": 1}}
            )
            assert denied.is_error is True
            assert "HTTP 401" in denied.content[0].text
            assert "a valid X-API-Key is required" in denied.content[0].text
            bad = await client.call_tool("list_items", {"category": "toys"})
            assert bad.is_error is True  # refused by the tool's schema, before any request

    run(main())


@pytest.mark.slow
def test_the_command_writes_checks_and_passes_mypy_and_ruff(tmp_path: Path) -> None:
    spec = tmp_path / "inventory.json"
    spec.write_text(json.dumps(inventory_api.app.openapi()))
    out = tmp_path / "tools.py"
    mcpgen = [sys.executable, "-m", "mcpgen", "openapi", str(spec), "-o", str(out)]
    written = subprocess.run(mcpgen, capture_output=True, text=True, timeout=120, check=False)
    assert written.returncode == 0, written.stderr
    checked = subprocess.run(
        [*mcpgen, "--check"], capture_output=True, text=True, timeout=120, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    out.write_text(out.read_text().replace("BASE_URL =", "BASE_URL: str ="))
    drifted = subprocess.run(
        [*mcpgen, "--check"], capture_output=True, text=True, timeout=120, check=False
    )
    assert drifted.returncode == 1 and "BASE_URL" in drifted.stdout
    subprocess.run(mcpgen, capture_output=True, text=True, timeout=120, check=True)
    for tool in (["ruff", "check", "--isolated"], ["ruff", "format", "--check", "--isolated"]):
        proc = subprocess.run(
            [sys.executable, "-m", *tool, str(out)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *shared_cache(tmp_path), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
    )
    assert mypy.returncode == 0, mypy.stdout


SERVER_SCRIPT = """
import sys
sys.path.insert(0, {folder!r})
import inventory_tools
from mcpgen import Server
from mcpgen.openapi import ApiAuth

server = Server("inventory-mcp", "1.0")
inventory_tools.register(server, inventory_tools.Api({base!r}, inventory_tools.SCHEMES))
if __name__ == "__main__":
    server.run()
"""


@pytest.mark.slow
def test_the_official_python_client_calls_the_generated_tools(
    module: ModuleType, upstream: str
) -> None:
    """The generated module served over stdio, called by the official Python SDK 2.3."""
    from tests.tooling import official_python

    folder = Path(module.__file__ or "").parent
    script = folder / "serve_inventory.py"
    script.write_text(SERVER_SCRIPT.format(folder=str(folder), base=upstream))
    proc = subprocess.run(
        [official_python(), str(Path(__file__).with_name("official_client.py")),
         sys.executable, str(script)],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["tools"] == ["create_item", "delete_item", "get_item", "list_items"]
    assert seen["readOnly"] is True
    assert [item["name"] for item in seen["page"]["items"]] == ["anvil"]
    assert seen["missingError"] is True
    assert "getItem: HTTP 404 Not Found" in seen["missingText"]


@pytest.mark.parametrize("era", ERAS)
def test_get_operations_as_resources_by_route_map(tmp_path: Path, upstream: str, era: str) -> None:
    """`--resource op:getItem` (here `resources=`): the GET is a resource template read
    at `inventory://items/{item_id}`; a GET that needs a query parameter stays a tool and
    the refusal says why; everything else is a tool as before."""
    spec = tmp_path / "inventory.json"
    spec.write_text(json.dumps(inventory_api.app.openapi()))
    path = tmp_path / "inventory_resources.py"
    text, refused = generate(
        str(spec), path, resources=("op:getItem", "op:createItem", "path:/items")
    )
    assert refused == ["createItem as a resource: only GET operations can be resources, not "
                       "POST (kept as a tool)"]  # fmt: skip
    path.write_text(text)
    loaded = importlib.util.spec_from_file_location("inventory_resources", path)
    assert loaded is not None and loaded.loader is not None
    found = importlib.util.module_from_spec(loaded)
    sys.modules["inventory_resources"] = found
    loaded.loader.exec_module(found)
    server = Server("inventory-mcp", "1.0")
    found.register(server, found.Api(upstream, found.SCHEMES))

    async def main() -> None:
        async with Client.memory(server, era=era) as client:
            tools = {tool.name for tool in await client.list_tools()}
            assert tools == {"create_item", "delete_item"}
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates] == ["inventory://items/{item_id}"]
            listed = await client.list_resources()
            assert [r.uri for r in listed] == ["inventory://items"]
            read = await client.read_resource("inventory://items/2")
            item = json.loads(read.contents[0].text)
            assert (item["name"], read.contents[0].mime_type) == ("rake", "application/json")
            page = json.loads((await client.read_resource("inventory://items")).contents[0].text)
            assert page["total"] == 2

    run(main())
