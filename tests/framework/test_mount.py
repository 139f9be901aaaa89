"""`Server.mount` and `Server.import_server`: another server's features served under a
namespace, in both eras, with MRTR rounds, await-style input, tasks, lifespans,
completions and forwarded change notifications; collisions refused."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from mcpgen import (
    Client,
    ConfigurationError,
    Context,
    InputRequired,
    McpError,
    Server,
    elicit_form,
)
from mcpgen import types as t
from tests.framework.common import ERAS, run, text_of
from tests.transports.httpharness import serve


def weather(events: list[str]) -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("weather up")
        yield {"unit": "celsius"}
        events.append("weather down")

    server = Server("weather", lifespan=lifespan)

    @server.tool
    def forecast(city: str, ctx: Context) -> str:
        return f"sunny in {city}, {ctx.lifespan['unit']}"

    @server.tool
    def confirm(ctx: Context) -> Any:  # MRTR style
        answer = ctx.input("sure")
        if answer is None:
            return InputRequired({"sure": elicit_form("Sure?", {"type": "object"})})
        return f"confirmed: {answer.action}"

    @server.tool
    async def ask(ctx: Context) -> str:  # await style
        answer = await ctx.elicit("Which city?", {"type": "object"})
        return f"asked: {answer.action}"

    @server.tool(task="optional")
    async def slow_report(ctx: Context) -> str:
        await asyncio.sleep(0.01)
        return f"report as task {ctx.task_id is not None}"

    @server.tool
    async def own_read(ctx: Context) -> str:
        [contents] = await ctx.read_resource("weather://current")  # its own URI
        return getattr(contents, "text", "")

    @server.resource("weather://current", mime_type="text/plain")
    def current() -> str:
        return "18 degrees"

    @server.resource_template("weather://city/{name}")
    def city(name: str) -> str:
        return f"weather of {name}"

    @server.prompt
    def outlook(city: str) -> str:
        return f"Give the outlook for {city}"

    @server.completion(prompt="outlook")
    def cities(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [c for c in ("Paris", "Perth", "Oslo") if c.startswith(value)]

    return server


def news() -> Server:
    server = Server("news")

    @server.tool
    def headline() -> str:
        return "all quiet"

    @server.resource("news:today")
    def today() -> str:
        return "nothing happened"

    @server.completion()
    def anything(ref: Any, argument: str, value: str, context: dict[str, str]) -> list[str]:
        name = getattr(ref, "name", None) or ref.uri
        return [f"{name}:{value}"]

    @server.prompt
    def digest() -> str:
        return "digest"

    return server


def hub(events: list[str]) -> Server:
    parent = Server("hub")

    @parent.tool
    def ping() -> str:
        return "pong"

    parent.mount(weather(events), namespace="weather")
    parent.mount(news(), namespace="news")
    return parent


async def accept(params: Any) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={})


async def exercise(client: Client, era: str) -> None:
    tools = sorted(x.name for x in await client.list_tools())
    assert tools == [
        "news_headline",
        "ping",
        "weather_ask",
        "weather_confirm",
        "weather_forecast",
        "weather_own_read",
        "weather_slow_report",
    ]
    assert text_of(await client.call_tool("ping")) == "pong"
    forecast = await client.call_tool("weather_forecast", {"city": "Oslo"})
    assert text_of(forecast) == "sunny in Oslo, celsius"  # the mounted server's lifespan
    assert text_of(await client.call_tool("weather_confirm")) == "confirmed: accept"
    assert text_of(await client.call_tool("weather_ask")) == "asked: accept"
    assert text_of(await client.call_tool("weather_own_read")) == "18 degrees"
    assert text_of(await client.call_tool("news_headline")) == "all quiet"
    uris = sorted(r.uri for r in await client.list_resources())
    assert uris == ["news:news/today", "weather://weather/current"]
    templates = [x.uri_template for x in await client.list_resource_templates()]
    assert templates == ["weather://weather/city/{name}"]
    read = await client.read_resource("weather://weather/city/lima")
    assert read.contents[0].text == "weather of lima"
    assert (await client.read_resource("news:news/today")).contents[0].text == "nothing happened"
    with pytest.raises(McpError):
        await client.read_resource("weather://current")  # the unprefixed URI is not served
    prompt = await client.get_prompt("weather_outlook", {"city": "Rome"})
    assert prompt.messages[0].content.text == "Give the outlook for Rome"
    done = await client.complete({"type": "ref/prompt", "name": "weather_outlook"}, "city", "P")
    assert done.completion.values == ["Paris", "Perth"]
    # the news server's fallback completion sees the reference as it names it
    done = await client.complete({"type": "ref/prompt", "name": "news_digest"}, "x", "v")
    assert done.completion.values == ["digest:v"]
    done = await client.complete({"type": "ref/resource", "uri": "news:news/today"}, "x", "v")
    assert done.completion.values == ["news:today:v"]
    if era == "modern":
        handle = await client.call_tool("weather_slow_report", task=True)
        assert not isinstance(handle, t.CallToolResult)
        assert text_of(await handle.result()) == "report as task True"


@pytest.mark.parametrize("era", ERAS)
def test_mounted_servers_in_memory(era: str) -> None:
    events: list[str] = []
    parent = hub(events)

    async def main() -> None:
        async with Client.memory(parent, era=era, on_elicitation=accept) as client:
            await exercise(client, era)
            assert events == ["weather up"]  # entered at the first message
        assert events == ["weather up", "weather down"]

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_mounted_servers_over_http(era: str) -> None:
    events: list[str] = []
    with serve(hub(events).asgi_app()) as (url, _):
        assert events == ["weather up"]

        async def main() -> None:
            async with Client.http(url, era=era, on_elicitation=accept, timeout=20) as client:
                await exercise(client, era)

        run(main())
    assert events == ["weather up", "weather down"]


@pytest.mark.parametrize("era", ERAS)
def test_a_mount_stays_live_and_forwards_its_notifications(era: str) -> None:
    child = Server("child")
    child.add_tool(lambda: "one", name="first")
    parent = Server("parent")
    parent.mount(child, namespace="kid")

    @child.resource("kid://doc")
    def doc() -> str:
        return "v1"

    async def main() -> None:
        async with Client.memory(parent, era=era) as client:
            assert [x.name for x in await client.list_tools()] == ["kid_first"]
            got: list[Any] = []

            async def consume() -> None:
                async for note in client.listen(tools=True, resource_uris=["kid://kid/doc"]):
                    got.append(note)
                    if len(got) == 2:
                        break

            listening = asyncio.ensure_future(consume())
            await asyncio.sleep(0.1)
            child.add_tool(lambda: "two", name="second")
            child.notify_resource_updated("kid://doc")
            await asyncio.wait_for(listening, 10)
            assert [type(n).__name__ for n in got] == [
                "ToolListChangedNotification",
                "ResourceUpdatedNotification",
            ]
            assert got[1].params.uri == "kid://kid/doc"
            names = sorted(x.name for x in await client.list_tools(refresh=True))
            assert names == ["kid_first", "kid_second"]
            assert text_of(await client.call_tool("kid_second")) == "two"
            child.remove_tool("first")
            await asyncio.sleep(0.05)
            assert [x.name for x in await client.list_tools(refresh=True)] == ["kid_second"]

    run(main())


def test_collisions_are_refused() -> None:
    child = Server("child")
    child.add_tool(lambda: "x", name="tool")
    parent = Server("parent")
    parent.add_tool(lambda: "mine", name="kid_tool")
    with pytest.raises(ConfigurationError, match="kid_tool"):
        parent.mount(child, namespace="kid")
    assert list(parent._registry.tools) == ["kid_tool"]  # nothing half-mounted

    other = Server("other")
    other.mount(child, namespace="a")
    twin = Server("twin")
    twin.add_tool(lambda: "y", name="tool")
    with pytest.raises(ConfigurationError, match="a_tool"):
        other.mount(twin, namespace="a")
    # a registration on the child that would clash in a parent is refused, and undone
    other.add_tool(lambda: "z", name="a_new")
    with pytest.raises(ConfigurationError, match="a_new"):
        child.add_tool(lambda: "w", name="new")
    assert sorted(child._registry.tools) == ["tool"]
    with pytest.raises(ConfigurationError, match="namespace"):
        Server("p").mount(child, namespace="bad name")
    with pytest.raises(ConfigurationError, match="in itself"):
        child.mount(child, namespace="me")
    with pytest.raises(ConfigurationError, match="in itself"):
        child.mount(other, namespace="loop")  # `child` is mounted in `other`


def test_import_server_copies_once() -> None:
    child = Server("child")
    child.add_tool(lambda: "one", name="first")
    parent = Server("parent")
    parent.import_server(child, namespace="kid")
    child.add_tool(lambda: "two", name="second")  # not seen by the parent

    async def main() -> None:
        async with Client.memory(parent) as client:
            assert [x.name for x in await client.list_tools()] == ["kid_first"]
            assert text_of(await client.call_tool("kid_first")) == "one"

    run(main())
    assert child._watchers == []


def test_mounting_without_a_namespace_keeps_names() -> None:
    child = Server("child")
    child.add_tool(lambda: "one", name="first")
    child.add_resource("mem://a", "A")
    parent = Server("parent")
    parent.mount(child)

    async def main() -> None:
        async with Client.memory(parent) as client:
            assert [x.name for x in await client.list_tools()] == ["first"]
            assert (await client.read_resource("mem://a")).contents[0].text == "A"

    run(main())


def test_nested_mounts_and_a_replayed_task_read_their_own_resources() -> None:
    grandchild = Server("gc")
    grandchild.add_resource("gc://doc", "deep")

    @grandchild.tool
    async def deep_read(ctx: Context) -> str:
        [contents] = await ctx.read_resource("gc://doc")
        return getattr(contents, "text", "")

    child = Server("kid")
    child.add_resource("kid://doc", "kid doc")
    child.mount(grandchild, namespace="gc")

    @child.tool(task="optional")
    async def ask_then_read(ctx: Context) -> str:
        answer = await ctx.elicit("Go on?", {"type": "object"})  # replayed in the task
        [contents] = await ctx.read_resource("kid://doc")
        return f"{answer.action}: {getattr(contents, 'text', '')}"

    parent = Server("parent", task_poll_seconds=0.05)  # quick task polls
    parent.mount(child, namespace="kid")

    async def main() -> None:
        async with Client.memory(parent, era="modern", on_elicitation=accept) as client:
            uris = sorted(r.uri for r in await client.list_resources())
            assert uris == ["gc://kid/gc/doc", "kid://kid/doc"]
            assert text_of(await client.call_tool("kid_gc_deep_read")) == "deep"
            assert text_of(await client.call_tool("kid_ask_then_read")) == "accept: kid doc"
            handle = await client.call_tool("kid_ask_then_read", task=True)
            assert not isinstance(handle, t.CallToolResult)
            assert text_of(await handle.result()) == "accept: kid doc"

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_a_mounted_mcp_app_keeps_its_link_to_its_tool(era: str) -> None:
    from mcpgen import tool_app

    charts = Server("charts")
    charts.add_app_resource("ui://chart", "<html>chart</html>")

    @charts.tool(app="ui://chart")
    def plot(values: list[float]) -> str:
        return f"{len(values)} points"

    hub = Server("hub")
    hub.mount(charts, namespace="viz")

    async def main() -> None:
        async with Client.memory(hub, era=era, apps=True) as client:
            [tool] = await client.list_tools()
            assert tool.name == "viz_plot"
            link = tool_app(tool)
            assert link is not None and link.resource_uri == "ui://viz/chart"
            assert tool.meta["ui/resourceUri"] == "ui://viz/chart"
            app = await client.read_app(tool)
            assert (app.uri, app.html) == ("ui://viz/chart", "<html>chart</html>")
            read = await client.read_resource("ui://viz/chart")
            assert read.contents[0].uri == "ui://viz/chart"
            assert text_of(await client.call_tool("viz_plot", {"values": [1, 2]})) == "2 points"
        if era == "modern":
            async with Client.memory(hub, era=era, apps=True) as client:
                found = await client.discover()
                assert (
                    "io.modelcontextprotocol/ui"
                    in msgspec.to_builtins(found.capabilities)["extensions"]
                )

    run(main())
