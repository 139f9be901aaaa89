"""`Client.read_resource` (issue 24, item 14): each item of `contents` is a
`TextResourceContents` or a `BlobResourceContents`, so the `isinstance` checks written
for the official SDK keep working, in both eras; the CLI's `read` shows both kinds."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from mcpgen import Client, ReadResult, Server
from mcpgen.types import BlobResourceContents, TextResourceContents
from tests.typecheck import check_marks


def build() -> Server:
    server = Server("reads")
    server.add_resource("mem://text", "hello", mime_type="text/plain")
    server.add_resource("mem://blob", b"\x00\x01\x02", mime_type="application/octet-stream")
    return server


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_contents_are_concrete(era: str) -> None:
    async def main() -> None:
        async with Client.memory(build(), era=era) as client:
            text = await client.read_resource("mem://text")
            assert isinstance(text, ReadResult)
            (item,) = text.contents
            assert isinstance(item, TextResourceContents)
            assert (item.uri, item.text, item.mime_type) == ("mem://text", "hello", "text/plain")
            (blob,) = (await client.read_resource("mem://blob")).contents
            assert isinstance(blob, BlobResourceContents)
            assert base64.b64decode(blob.blob) == b"\x00\x01\x02"

    asyncio.run(main())


TYPED = """from mcpgen import Client
from mcpgen.types import BlobResourceContents, TextResourceContents


async def read(client: Client) -> str:
    result = await client.read_resource("mem://x")
    for item in result.contents:
        if isinstance(item, TextResourceContents):
            reveal_type(item.text)  # R: str
        else:
            reveal_type(item)  # R: mcpgen_types.v2026_07_28.BlobResourceContents
    return result.contents[0].text  # E: union-attr
"""


@pytest.mark.slow
def test_mypy_narrows_the_contents(tmp_path: Path) -> None:
    check_marks(TYPED, tmp_path)
