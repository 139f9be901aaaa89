"""What a proxy says of itself: its upstream's serverInfo (noting the proxy) and
instructions, in both eras (the legacy `initialize` result, the modern `server/discover`
and every result's `_meta`), over memory and through `mcpgen proxy` on stdio; an
aggregating proxy's instructions joined under a heading per prefix."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mcpgen import Client, Proxy
from tests.processes import http_server
from tests.proxy.common import ERAS, MCPGEN, UPSTREAM

INSTRUCTIONS = "A test server exposing every feature of the MCP specification."
NOTE = "mcpgen proxy of mcpgen-everything 1.0.0"


async def _identity(client: Client) -> tuple[dict[str, Any] | None, str | None, Any]:
    async with client:
        if client.era == "modern":  # a pinned modern client has not discovered yet
            await client.discover()
        return client.server_info, client.core.instructions, client.era


@pytest.mark.parametrize("upstream_era", ERAS)
@pytest.mark.parametrize("era", ERAS)
def test_a_proxy_answers_with_its_upstreams_identity(upstream_era: str, era: str) -> None:
    proxy = Proxy(UPSTREAM, upstream_era=upstream_era)  # type: ignore[arg-type]
    info, instructions, seen = asyncio.run(_identity(Client.memory(proxy, era=era)))  # type: ignore[arg-type]
    assert seen == era
    assert info == {"name": "mcpgen-everything", "version": "1.0.0", "description": NOTE}
    assert instructions == INSTRUCTIONS


def test_the_modern_stamp_and_discover_name_the_upstream() -> None:
    async def main() -> Any:
        async with Client.memory(Proxy(UPSTREAM), era="modern") as client:
            found = await client.discover()
            # Served from the proxy's own registry: stamped by the proxy.
            listed = await client.request("tools/list")
            return found, listed

    found, listed = asyncio.run(main())
    assert found.instructions == INSTRUCTIONS
    assert found.meta["io.modelcontextprotocol/serverInfo"]["name"] == "mcpgen-everything"
    assert listed.meta["io.modelcontextprotocol/serverInfo"]["description"] == NOTE


@pytest.mark.parametrize("era", ERAS)
def test_given_name_and_instructions_win(era: str) -> None:
    proxy = Proxy(UPSTREAM, name="gateway", version="2.0", instructions="Ask nicely.")
    info, instructions, _ = asyncio.run(_identity(Client.memory(proxy, era=era)))  # type: ignore[arg-type]
    assert info == {"name": "gateway", "version": "2.0"}
    assert instructions == "Ask nicely."


@pytest.mark.parametrize("era", ERAS)
def test_an_aggregating_proxy_joins_the_instructions_under_headings(era: str) -> None:
    proxy = Proxy({"old": UPSTREAM, "new": UPSTREAM}, upstream_era={"old": "legacy"})
    info, instructions, _ = asyncio.run(_identity(Client.memory(proxy, era=era)))  # type: ignore[arg-type]
    assert info == {
        "name": "mcpgen-proxy",
        "version": "0.1.0",
        "description": "mcpgen proxy of old (mcpgen-everything 1.0.0), "
        "new (mcpgen-everything 1.0.0)",
    }
    assert instructions == f"## old\n\n{INSTRUCTIONS}\n\n## new\n\n{INSTRUCTIONS}"


@pytest.mark.slow
@pytest.mark.parametrize(("upstream_era", "era"), [("legacy", "modern"), ("modern", "legacy")])
def test_mcpgen_proxy_on_stdio_answers_with_its_upstreams_identity(
    upstream_era: str, era: str
) -> None:
    command = [MCPGEN, "proxy", "--upstream-era", upstream_era, "--", *UPSTREAM]
    info, instructions, seen = asyncio.run(_identity(Client.stdio(command, era=era)))  # type: ignore[arg-type]
    assert seen == era
    assert info == {"name": "mcpgen-everything", "version": "1.0.0", "description": NOTE}
    assert instructions == INSTRUCTIONS


@pytest.mark.slow
@pytest.mark.parametrize("era", ERAS)
def test_over_http_the_identity_replaces_the_one_frozen_at_startup(
    era: str, tmp_path: Path
) -> None:
    """The HTTP app builds the server core before the lifespan connects the upstream."""

    def command(port: int) -> list[str]:
        return [MCPGEN, "proxy", "--transport", "http", "--port", str(port), "--", *UPSTREAM]

    with http_server(command, tmp_path / "proxy.log") as url:
        info, instructions, seen = asyncio.run(_identity(Client.http(url, era=era)))  # type: ignore[arg-type]
    assert seen == era
    assert info == {"name": "mcpgen-everything", "version": "1.0.0", "description": NOTE}
    assert instructions == INSTRUCTIONS
