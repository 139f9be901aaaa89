"""`scopes=` on features and what the core's authorization reads of the registry."""

from __future__ import annotations

import msgspec
import pytest

from mcpgen import ConfigurationError, Server
from mcpgen._server._authorize import needed_scopes
from mcpgen._server._methods import METHODS
from mcpgen_types import v2025_11_25 as legacy


def test_scopes_are_a_list_never_a_bare_string() -> None:
    server = Server("s")
    with pytest.raises(ConfigurationError, match="list of scope names"):

        @server.tool(scopes="admin")  # type: ignore[arg-type]
        def oops() -> str:
            return ""


def test_each_feature_kind_names_its_scopes() -> None:
    server = Server("s")

    @server.tool(scopes=["t"])
    def tool() -> str:
        return ""

    @server.prompt(scopes=["p"])
    def prompt() -> str:
        return ""

    @server.resource("res://exact", scopes=["r"])
    def exact() -> str:
        return ""

    @server.resource_template("res://items/{id}", scopes=["tpl"])
    def item(id: str) -> str:
        return id

    @server.tool
    def open_tool() -> str:
        return ""

    def needed(method: str, **params: object) -> frozenset[str]:
        """What a request needs, judged on params decoded as the core decodes them."""
        decoder = METHODS[method].modern
        assert decoder is not None
        decoded = decoder.decode(msgspec.json.encode(params | {"_meta": {}}))
        return needed_scopes(server._registry, method, decoded)

    assert needed("tools/call", name="tool") == {"t"}
    assert needed("tools/call", name="open_tool") == frozenset()
    assert needed("tools/call", name="missing") == frozenset()
    assert needed("prompts/get", name="prompt") == {"p"}
    assert needed("resources/read", uri="res://exact") == {"r"}
    assert needed("resources/read", uri="res://items/7") == {"tpl"}
    assert needed("resources/read", uri="res://other") == frozenset()
    listen = {"resourceSubscriptions": ["res://exact", "res://items/7"]}
    assert needed("subscriptions/listen", notifications=listen) == {"r", "tpl"}
    assert needed("tasks/get", taskId="x") == frozenset()
    template = {"type": "ref/resource", "uri": "res://items/{id}"}
    argument = {"name": "id", "value": ""}
    assert needed("completion/complete", ref=template, argument=argument) == {"tpl"}
    assert needed("completion/complete", ref={"type": "ref/prompt", "name": "prompt"},
                  argument=argument) == {"p"}  # fmt: skip
    subscribe = legacy.SubscribeRequestParams(uri="res://items/7")
    assert needed_scopes(server._registry, "resources/subscribe", subscribe) == {"tpl"}


def test_without_http_auth_ctx_auth_is_none_and_scopes_are_not_enforced() -> None:
    """In-process (as on stdio) there is no HTTP authorization: no token, no 403."""
    import asyncio

    from mcpgen import Client, Context

    server = Server("s")

    @server.tool(scopes=["admin"])
    def who(ctx: Context) -> str:
        return repr(ctx.auth)

    async def scenario(era: str) -> str:
        async with Client.memory(server, era=era) as client:  # type: ignore[arg-type]
            result = await client.call_tool("who")
            return result.content[0].text  # type: ignore[union-attr,no-any-return]

    assert asyncio.run(scenario("modern")) == "None"
    assert asyncio.run(scenario("legacy")) == "None"
