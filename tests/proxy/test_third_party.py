"""The proxy in front of servers that act as third-party ones do (issue 24, items 9 and
10): a `roots/list` the upstream sends right after `initialize`, outside any call, is
answered (from `--root`, else with no roots) without a traceback; a subscription to a
URI the proxy cannot deliver updates for is refused with a clear error; a URI the
upstream never listed is still read from it."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

from mcpgen import Client, McpError, Proxy

SERVER = Path(__file__).with_name("roots_server.py")


def _proxied(log: Path, *options: str) -> list[str]:
    """`mcpgen proxy` in front of roots_server.py over stdio, its stderr kept in `log`."""
    argv = [sys.executable, "-m", "mcpgen", "proxy", *options, "--", sys.executable, str(SERVER)]
    return ["sh", "-c", f"exec {shlex.join(argv)} 2>{shlex.quote(str(log))}"]


async def _roots_seen(command: list[str], era: str = "auto") -> object:
    async with Client.stdio(command, era=era) as client:  # type: ignore[arg-type]
        for _ in range(50):  # the upstream asked at start-up; its answer is on the way
            seen = json.loads((await client.call_tool("roots_seen")).content[0].text)
            if seen != "not asked":
                return seen
            await asyncio.sleep(0.1)
    return "not asked"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_roots_asked_at_start_up(tmp_path: Path, era: str) -> None:
    log = tmp_path / "proxy.log"
    assert asyncio.run(_roots_seen(_proxied(log, "--upstream-era", "legacy"), era)) == []
    assert "Traceback" not in log.read_text() and len(log.read_text().splitlines()) <= 1
    given = _proxied(log, "--root", str(tmp_path), "--root", "file:///srv/data")
    seen = asyncio.run(_roots_seen(given, era))
    assert seen == [{"uri": tmp_path.resolve().as_uri()}, {"uri": "file:///srv/data"}]
    assert "Traceback" not in log.read_text()


@pytest.mark.slow
def test_subscribing_to_what_cannot_be_delivered_is_refused(tmp_path: Path) -> None:
    """The listed resource may be subscribed to; a URI made from the upstream's template
    is refused, with an error that says why, in either era."""
    command = _proxied(tmp_path / "proxy.log")

    async def main() -> None:
        async with Client.stdio(command, era="legacy") as client:
            await client.request("resources/subscribe", {"uri": "note://fixed"})
            with pytest.raises(McpError) as caught:
                await client.request("resources/subscribe", {"uri": "note://7"})
            assert caught.value.code == -32602
            assert "cannot deliver updates of note://7" in caught.value.message
        async with Client.stdio(command, era="modern") as client:
            with pytest.raises(McpError) as caught:
                await anext(aiter(client.listen(resource_uris=["note://7"])))
            assert "made from a template" in caught.value.message

    asyncio.run(main())


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_unlisted_resources_are_read_from_the_upstream(era: str) -> None:
    """A tool may link to a resource no list shows (server-everything's session resources
    are listed only after a list-changed notification the proxy may not have followed
    yet): the proxy refused such a read with "resource not found". It now sends any URI
    it does not serve itself upstream, and lists nothing more than the upstream does."""

    async def main() -> None:
        proxy = Proxy([sys.executable, str(SERVER)])
        async with Client.memory(proxy, era=era) as client:  # type: ignore[arg-type]
            read = await client.read_resource("memo://hidden/1")
            assert [c.text for c in read.contents] == ["read memo://hidden/1"]  # type: ignore[union-attr]
            listed = await client.read_resource("note://fixed")
            assert [c.text for c in listed.contents] == ["read note://fixed"]  # type: ignore[union-attr]
            templates = await client.list_resource_templates()
            assert [x.uri_template for x in templates] == ["note://{id}"]

    asyncio.run(main())
