"""`scopes=` on features and what the auth gate asks of the registry."""

from __future__ import annotations

import pytest

from mcpgen import ConfigurationError, Server
from mcpgen._server._scopes import RegistryScopes


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

    features = RegistryScopes(lambda: server._registry)
    assert features.scoped
    assert features.needed("tools/call", "tool") == {"t"}
    assert features.needed("tools/call", "open_tool") == frozenset()
    assert features.needed("tools/call", "missing") == frozenset()
    assert features.needed("prompts/get", "prompt") == {"p"}
    assert features.needed("resources/read", "res://exact") == {"r"}
    assert features.needed("resources/read", "res://items/7") == {"tpl"}
    assert features.needed("resources/read", "res://other") == frozenset()
    assert features.needed("resources/subscribe", "res://items/7") == {"tpl"}
    assert features.needed("subscriptions/listen", "res://exact") == {"r"}
    assert features.needed("tasks/get", "x") == frozenset()


def test_a_server_without_scoped_features_is_not_scoped() -> None:
    server = Server("s")

    @server.tool
    def tool() -> str:
        return ""

    features = RegistryScopes(lambda: server._registry)
    assert not features.scoped

    @server.tool(scopes=["late"])
    def later() -> str:
        return ""

    assert features.scoped  # a new registry snapshot is looked at again


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
