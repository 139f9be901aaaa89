"""A legacy-only stdio server for the era-fallback tests.

argv[1] is how it treats anything before `initialize`: `silent` (no answer at all),
`error` (-32601), or `modern-probe` (answers discover with -32022 listing only a
version it does not speak: a modern server we cannot use).
"""

from __future__ import annotations

import json
import sys

mode = sys.argv[1] if len(sys.argv) > 1 else "error"
initialized = False
log = sys.stderr


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    log.write(f"got {method}\n")
    log.flush()
    if rid is None:
        continue
    if method == "initialize":
        initialized = True
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake-legacy", "version": "0.1"},
                },
            }
        )
    elif not initialized:
        if mode == "error":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": "not initialized"},
                }
            )
        elif mode == "modern-probe":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {
                        "code": -32022,
                        "message": "unsupported",
                        "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"},
                    },
                }
            )
    elif method == "tools/list":
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]},
            }
        )
    elif method == "tools/call":
        send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"content": [{"type": "text", "text": "hello from legacy"}]},
            }
        )
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})
