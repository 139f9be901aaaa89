"""A minimal stdio server, written without mcpgen, that lists some tools only to clients
declaring a capability (as server-everything does): `ask_user` to those declaring
elicitation, `sample_llm` to those declaring sampling; `echo` to all.

Run: `python tests/cli/capable_server.py`.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

OBJECT = {"type": "object", "properties": {}}
SIGN_IN = {
    "code": -32042,
    "message": "This request requires browser-based authorization.",
    "data": {
        "elicitations": [
            {
                "mode": "url",
                "url": "https://example.com/sign-in",
                "message": "Sign in first.",
                "elicitationId": "e-1",
            }
        ]
    },
}
WRAPPED = "Allowed directories:\n/tmp/a\n/tmp/b"
# 256 bytes (base64, padded) and 8 bytes (unpadded).
BLOB = base64.b64encode(bytes(range(256))).decode()


def tools(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    listed = [{"name": "echo", "inputSchema": OBJECT}]
    if "elicitation" in capabilities:
        listed.append({"name": "ask_user", "inputSchema": OBJECT})
    if "sampling" in capabilities:
        listed.append({"name": "sample_llm", "inputSchema": OBJECT})
    return listed


def call(name: str) -> dict[str, Any]:
    """The `result` (or `error`) of a call of tool `name`."""
    if name == "sign_in":
        return {"error": SIGN_IN}
    if name == "wrapped":
        content = [{"type": "text", "text": WRAPPED}]
        return {"result": {"content": content, "structuredContent": {"content": WRAPPED}}}
    if name == "binary":
        image = {"type": "image", "data": BLOB, "mimeType": "image/png"}
        blob = {"uri": "mem://eight", "blob": "AAECAwQFBgc", "mimeType": "application/x"}
        return {"result": {"content": [image, {"type": "resource", "resource": blob}]}}
    return {"result": {"content": [{"type": "text", "text": f"called {name}"}]}}


def main() -> None:
    capabilities: dict[str, Any] = {}
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, params = message.get("method"), message.get("params") or {}
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "initialize":
            capabilities = params.get("capabilities") or {}
            reply["result"] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "capable", "version": "1.0.0"},
            }
        elif method == "tools/list":
            reply["result"] = {"tools": tools(capabilities)}
        elif method == "tools/call":
            reply.update(call(str(params.get("name"))))
        elif method == "ping":
            reply["result"] = {}
        else:
            reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
