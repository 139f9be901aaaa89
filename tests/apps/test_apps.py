"""MCP Apps on a server and a client (issue 25): UI resources, tools linked to them,
the declared client support seen by handlers, and reading an app back, over memory and
Streamable HTTP in both eras."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import pytest

from mcpgen import (
    APP_MIME_TYPE,
    UI_EXTENSION,
    Client,
    ConfigurationError,
    Context,
    McpError,
    Server,
    tool_app,
)
from mcpgen_types import ext_apps as ui
from mcpgen_types import latest as t
from tests.conftest import REPO
from tests.transports.httpharness import serve

ERAS = ("modern", "legacy")
T = TypeVar("T")
EXAMPLE = REPO / "examples" / "apps"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 30))


def build(tmp_path: Path) -> Server:
    page = tmp_path / "page.html"
    page.write_text("<p>from a file</p>")
    server = Server("apps", "1.0")
    server.add_app_resource(
        "ui://demo/static.html",
        "<p>static</p>",
        ui=ui.McpUiResourceMeta(
            csp=ui.McpUiResourceCsp(connect_domains=["https://api.example.com"]),
            prefers_border=True,
        ),
        description="a static app",
    )
    server.add_app_resource("ui://demo/file.html", page)
    calls = {"n": 0}

    async def computed() -> str:
        calls["n"] += 1
        return f"<p>computed {calls['n']}</p>"

    server.add_app_resource("ui://demo/computed.html", computed)

    @server.tool(app="ui://demo/static.html")
    def show(ctx: Context) -> str:
        """Linked to the static app."""
        return "apps" if ctx.ui is not None else "text only"

    @server.tool(app=ui.McpUiToolMeta(resource_uri="ui://demo/static.html", visibility=["app"]))
    def app_only(n: int) -> int:
        return n * 2

    @server.tool
    def plain() -> str:
        return "plain"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_app_resources_are_listed_and_read_with_their_mime_type_and_ui_meta(
    tmp_path: Path, era: str
) -> None:
    async def main() -> None:
        async with Client.memory(build(tmp_path), era=era) as client:
            listed = {r.uri: r for r in await client.list_resources()}
            assert set(listed) == {
                "ui://demo/static.html",
                "ui://demo/file.html",
                "ui://demo/computed.html",
            }
            static = listed["ui://demo/static.html"]
            assert static.mime_type == APP_MIME_TYPE
            assert static.meta == {
                "ui": {
                    "csp": {"connectDomains": ["https://api.example.com"]},
                    "prefersBorder": True,
                }
            }
            assert static.name == "demo/static.html" and static.description == "a static app"
            read = await client.read_resource("ui://demo/static.html")
            (item,) = read.contents
            assert (item.mime_type, item.text) == (APP_MIME_TYPE, "<p>static</p>")
            assert item.meta == static.meta
            assert (await client.read_app("ui://demo/file.html")).html == "<p>from a file</p>"
            first = await client.read_app("ui://demo/computed.html")
            second = await client.read_resource("ui://demo/computed.html", refresh=True)
            assert first.html == "<p>computed 1</p>"
            assert second.contents[0].text == "<p>computed 2</p>"  # computed at every read

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_tools_carry_their_app_link_and_the_server_declares_the_extension(
    tmp_path: Path, era: str
) -> None:
    async def main() -> None:
        async with Client.memory(build(tmp_path), era=era) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            assert tools["show"].meta == {
                "ui": {"resourceUri": "ui://demo/static.html"},
                "ui/resourceUri": "ui://demo/static.html",
            }
            link = tool_app(tools["app_only"])
            assert link is not None and link.visibility == ["app"]
            assert tool_app(tools["plain"]) is None
            if era == "modern":  # legacy revisions have no `extensions` capability field
                await client.discover()
                assert UI_EXTENSION in client.server_capabilities["extensions"]
            app = await client.read_app(tools["show"])
            assert app.uri == "ui://demo/static.html" and app.html == "<p>static</p>"
            assert app.ui is not None and app.ui.prefers_border is True
            with pytest.raises(McpError, match="has no app"):
                await client.read_app(tools["plain"])
            # an app-only tool stays callable (the app calls it through its host)
            result = await client.call_tool("app_only", {"n": 21})
            assert result.structured_content == {"result": 42} or result.content[0].text == "42"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_handlers_see_whether_the_client_renders_apps(tmp_path: Path, era: str) -> None:
    async def main() -> None:
        server = build(tmp_path)
        async with Client.memory(server, era=era, apps=True) as client:
            answer = await client.call_tool("show", {})
            assert answer.content[0].text == "apps"
        async with Client.memory(server, era=era) as client:
            answer = await client.call_tool("show", {})
            assert answer.content[0].text == "text only"
        # declared without the MCP App MIME type: it cannot render this server's apps
        other = {UI_EXTENSION: {"mimeTypes": ["text/uri-list"]}}
        async with Client.memory(server, era=era, extensions=other) as client:
            assert (await client.call_tool("show", {})).content[0].text == "text only"

    run(main())


def test_ui_capability_is_typed(tmp_path: Path) -> None:
    seen: list[ui.McpUiClientCapabilities | None] = []
    server = Server("caps", "1.0")

    @server.tool
    def probe(ctx: Context) -> str:
        seen.append(ctx.ui)
        return "ok"

    async def main() -> None:
        async with Client.memory(server, apps=True) as client:
            await client.call_tool("probe", {})

    run(main())
    assert seen == [ui.McpUiClientCapabilities(mime_types=[APP_MIME_TYPE])]


def test_mistakes_are_refused_at_registration(tmp_path: Path) -> None:
    server = Server("bad", "1.0")
    with pytest.raises(ConfigurationError, match="ui:// scheme"):
        server.add_app_resource("https://example.com/app.html", "<p>x</p>")
    with pytest.raises(ConfigurationError, match="no file"):
        server.add_app_resource("ui://x/missing.html", tmp_path / "missing.html")
    with pytest.raises(ConfigurationError, match="ui:// scheme"):
        server.add_tool(lambda: "x", name="t1", app="file:///app.html")
    with pytest.raises(ConfigurationError, match="empty visibility"):
        server.add_tool(
            lambda: "x", name="t2", app=ui.McpUiToolMeta(resource_uri="ui://x/a", visibility=[])
        )


def test_a_computed_app_must_produce_text() -> None:
    server = Server("bad", "1.0")
    server.add_app_resource("ui://x/bytes.html", lambda: b"<p>bytes</p>")  # type: ignore[arg-type,return-value]

    async def main() -> None:
        async with Client.memory(server) as client:
            with pytest.raises(McpError):
                await client.read_resource("ui://x/bytes.html")

    run(main())


def test_tool_app_reads_the_flat_key_early_servers_wrote() -> None:
    tool = t.Tool(name="x", input_schema={"type": "object"}, meta={"ui/resourceUri": "ui://a/b"})
    link = tool_app(tool)
    assert link is not None and link.resource_uri == "ui://a/b"
    broken = t.Tool(name="y", input_schema={"type": "object"}, meta={"ui": {"visibility": 3}})
    assert tool_app(broken) is None


@pytest.mark.parametrize("era", ERAS)
def test_the_example_over_streamable_http(era: str) -> None:
    """examples/apps/server.py over HTTP: the table app, its tools, the fallback text."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("apps_example", EXAMPLE / "server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["apps_example"] = module  # msgspec resolves the structs' annotations there
    spec.loader.exec_module(module)

    async def main(url: str) -> None:
        async with Client.http(url, era=era, apps=True) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            app = await client.read_app(tools["list_products"])
            assert "<table" in app.html and "ui/initialize" in app.html
            assert "http://" not in app.html.replace("http://www.w3.org", "")  # no CDN
            link = tool_app(tools["reprice"])
            assert link is not None and link.visibility == ["app"]
            listed = await client.call_tool("list_products", {"max_price": 20})
            products = listed.structured_content["products"]
            assert [p["sku"] for p in products] == ["B-200", "C-300"]
            repriced = await client.call_tool("reprice", {"sku": "B-200", "percent": 10})
            assert repriced.structured_content["price"] == 4.68
            text = await client.call_tool("describe_view", {})
            assert text.content[0].text == "this client renders apps: " + APP_MIME_TYPE

    with serve(module.server.asgi_app()) as (url, _):
        run(main(url))
    assert json.loads(msgspec.json.encode(module.PRODUCTS[1]))["price"] == 4.68
