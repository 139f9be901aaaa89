"""A stdio server written without mcpgen that, like server-filesystem, asks its client
for `roots/list` as soon as the session is initialized (outside any call), and lists
one resource and one template. Tool `roots_seen` tells which roots it got. It reads any
URI, listed or not (`read <uri>`), as servers whose tools link to unlisted resources do.

Run: `python tests/proxy/roots_server.py`.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT = {"type": "object", "properties": {}}


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    capabilities: dict[str, Any] = {}
    seen: Any = "not asked"
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if method is None:  # the answer to our roots/list
            seen = message.get("result", {}).get("roots", message.get("error"))
            continue
        if method == "notifications/initialized" and "roots" in capabilities:
            send({"id": "roots-1", "method": "roots/list"})
        if "id" not in message:
            continue
        reply: dict[str, Any] = {"id": message["id"]}
        if method == "initialize":
            capabilities = params.get("capabilities") or {}
            reply["result"] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}, "resources": {"subscribe": True}},
                "serverInfo": {"name": "roots", "version": "1.0.0"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": [{"name": "roots_seen", "inputSchema": OBJECT}]}
        elif method == "tools/call":
            reply["result"] = {"content": [{"type": "text", "text": json.dumps(seen)}]}
        elif method == "resources/list":
            reply["result"] = {"resources": [{"uri": "note://fixed", "name": "fixed"}]}
        elif method == "resources/templates/list":
            template = {"uriTemplate": "note://{id}", "name": "note"}
            reply["result"] = {"resourceTemplates": [template]}
        elif method == "resources/read":
            text = {"uri": params["uri"], "text": f"read {params['uri']}"}
            reply["result"] = {"contents": [text]}
        elif method in ("resources/subscribe", "resources/unsubscribe", "ping"):
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        send(reply)


if __name__ == "__main__":
    main()
