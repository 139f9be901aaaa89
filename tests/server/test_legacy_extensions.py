"""Extensions a client of the initialize era declares (`capabilities.extensions`, as
modern clients do): the legacy revisions' `ClientCapabilities` type the key (policy
`[added.legacy.ClientCapabilities]`), so `initialize` params are decoded once and
handlers see the declaration through `ctx`."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpgen import Context, Server
from mcpgen._server._apps import APP_MIME_TYPE, UI_EXTENSION
from mcpgen._server._tasks import TASKS
from mcpgen_types import v2024_11_05, v2025_03_26, v2025_06_18, v2025_11_25
from tests.server.harness import Client, request

DECLARED = {
    UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]},
    TASKS: {},
}


@pytest.mark.parametrize("module", [v2024_11_05, v2025_03_26, v2025_06_18, v2025_11_25])
def test_every_legacy_revision_types_client_extensions(module: Any) -> None:
    caps = msgspec.convert({"roots": {}, "extensions": DECLARED}, module.ClientCapabilities)
    assert caps.extensions == DECLARED
    assert msgspec.to_builtins(caps)["extensions"] == DECLARED
    with pytest.raises(msgspec.ValidationError):  # each extension's settings: an object
        msgspec.convert({"extensions": {UI_EXTENSION: 1}}, module.ClientCapabilities)


def build() -> Server:
    server = Server("legacy-extensions", "1.0")

    @server.tool()
    def seen(ctx: Context) -> str:
        extensions = ctx.client_capabilities.extensions
        return json.dumps(
            {
                "extensions": sorted(extensions) if isinstance(extensions, dict) else None,
                "apps": ctx.ui is not None,
            }
        )

    return server


def test_a_legacy_initialize_is_decoded_once_and_handlers_see_its_extensions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded: list[bytes] = []
    real = msgspec.json.decode

    def counting(buf: Any, *args: Any, **kwargs: Any) -> Any:
        if UI_EXTENSION.encode() in bytes(buf):
            decoded.append(bytes(buf))
        return real(buf, *args, **kwargs)

    client = Client(build())
    monkeypatch.setattr(msgspec.json, "decode", counting)
    init = client.initialize("2025-11-25", {"extensions": DECLARED})
    monkeypatch.undo()
    assert init["result"]["protocolVersion"] == "2025-11-25"
    # One decode of the params: none of the raw request again to find `extensions`.
    assert len(decoded) == 1, decoded
    reply = client.reply(request(1, "tools/call", {"name": "seen", "arguments": {}}, modern=False))
    assert reply is not None
    seen = json.loads(reply["result"]["content"][0]["text"])
    assert seen == {"extensions": sorted(DECLARED), "apps": True}


def test_a_legacy_client_without_extensions_declares_none() -> None:
    client = Client(build())
    client.initialize("2025-06-18", {"roots": {}})
    reply = client.reply(request(1, "tools/call", {"name": "seen", "arguments": {}}, modern=False))
    assert reply is not None
    assert json.loads(reply["result"]["content"][0]["text"]) == {"extensions": None, "apps": False}
