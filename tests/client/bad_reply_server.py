"""A stdio server that answers `tools/call` with what a client must survive (run as a
subprocess): the tool's name says what comes before, or instead of, the real answer.

    deep       a reply with the request's id nested 100,000 deep, then the answer
    deep-only  only that reply
    garbage    a line that is not JSON, then the answer
    utf8       a reply with the request's id that is not UTF-8, then the answer
    (other)    the answer: the text "ok"
"""

from __future__ import annotations

import json
import sys

out = sys.stdout.buffer


def answer(rid: object, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}], "resultType": "complete"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


for line in sys.stdin.buffer:
    message = json.loads(line)
    rid, name = message.get("id"), (message.get("params") or {}).get("name")
    if rid is None:
        continue
    before: list[bytes] = []
    if name in ("deep", "deep-only"):
        depth = 100_000
        before.append(
            b'{"jsonrpc":"2.0","id":%d,"result":' % rid + b"[" * depth + b"]" * depth + b"}"
        )
    elif name == "garbage":
        before.append(b"this is not JSON")
    elif name == "utf8":
        before.append(answer(rid, "lenient").replace(b'"jsonrpc"', b'"x": "\xff", "jsonrpc"'))
    frames = before if name == "deep-only" else [*before, answer(rid, "ok")]
    out.write(b"".join(frame + b"\n" for frame in frames))
    out.flush()
