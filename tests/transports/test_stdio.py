"""stdio transport against a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).parent / "stdio_server.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def line(rid: Any, name: str, args: dict[str, Any] | None = None, **meta: Any) -> str:
    params = {"name": name, "arguments": args or {}, "_meta": {**META, **meta}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})


class Proc:
    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen(
            [sys.executable, str(SERVER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, text: str | bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(text.encode() if isinstance(text, str) else text)
        self.p.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.p.stdout is not None
        raw = self.p.stdout.readline()
        assert raw, "server closed stdout"
        assert raw.endswith(b"\n") and not raw.endswith(b"\r\n")
        return json.loads(raw)  # type: ignore[no-any-return]

    def wait_stderr(self, text: bytes) -> None:
        assert self.p.stderr is not None
        while text not in self.p.stderr.readline():
            pass

    def finish(self, timeout: float = 5) -> tuple[int, bytes, bytes]:
        """Close stdin (if still open), then collect everything until the process exits."""
        assert self.p.stdin is not None and self.p.stdout is not None and self.p.stderr is not None
        if not self.p.stdin.closed:
            self.p.stdin.close()
        code = self.p.wait(timeout=timeout)
        return code, self.p.stdout.read(), self.p.stderr.read()


@pytest.fixture
def proc() -> Any:
    p = Proc()
    yield p
    if p.p.poll() is None:
        p.p.kill()
        p.p.wait()


def test_framing_cr_blank_lines_and_eof(proc: Proc) -> None:
    proc.send(
        line(1, "echo", {"text": "a"}) + "\r\n\n   \n" + line(2, "echo", {"text": "b"}) + "\n"
    )
    assert proc.read()["result"]["content"][0]["text"] == "a"
    assert proc.read()["result"]["content"][0]["text"] == "b"
    proc.send(line(3, "echo", {"text": "no newline at the end"}))
    assert proc.p.stdin is not None
    proc.p.stdin.close()
    code, out, _ = proc.finish()
    assert code == 0
    assert json.loads(out)["id"] == 3


def test_stray_prints_go_to_stderr(proc: Proc) -> None:
    proc.send(line(1, "noisy", {"text": "clean"}) + "\n")
    assert proc.read()["result"]["content"][0]["text"] == "clean"
    proc.send(line(2, "echo", {"text": "still clean"}) + "\n")
    assert proc.read()["id"] == 2
    assert proc.p.stdin is not None
    proc.p.stdin.close()
    code, out, err = proc.finish()
    assert code == 0 and out == b""
    assert b"stray print from a handler" in err and b"and a stray write" in err


def test_malformed_input_gets_errors_and_the_stream_goes_on(proc: Proc) -> None:
    proc.send(b"{not json\n" + b"\xff\xfe\n" + b'{"jsonrpc":"2.0","id":null,"method":"x"}\n')
    assert [proc.read()["error"]["code"] for _ in range(3)] == [-32700, -32700, -32600]
    proc.send(line(1, "echo", {"text": "alive"}) + "\n")
    assert proc.read()["result"]["content"][0]["text"] == "alive"


def test_oversized_line_gets_one_error() -> None:
    p = Proc("2048")
    try:
        p.send(line(1, "echo", {"text": "x" * 5000}) + "\n")
        reply = p.read()
        assert reply["error"]["code"] == -32600 and "longer than 2048" in reply["error"]["message"]
        p.send(line(2, "echo", {"text": "fits"}) + "\n")
        assert p.read()["result"]["content"][0]["text"] == "fits"
    finally:
        p.p.kill()
        p.p.wait()


def test_oversized_then_normal_lines() -> None:
    p = Proc("2048")
    try:
        big = line(1, "echo", {"text": "x" * 5000})
        p.send(big[:1500])
        time.sleep(0.05)
        p.send(big[1500:] + "\n" + line(2, "echo", {"text": "fits"}) + "\n")
        first = p.read()
        assert first["error"]["code"] == -32600
        assert p.read()["result"]["content"][0]["text"] == "fits"
    finally:
        p.p.kill()
        p.p.wait()


def test_cancellation_over_stdio(proc: Proc) -> None:
    proc.send(line("s1", "slow") + "\n")
    proc.wait_stderr(b"slow: started")
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "s1", "reason": "stop"},
    }
    proc.send(json.dumps(cancel) + "\n" + line(2, "echo", {"text": "after"}) + "\n")
    assert proc.read()["id"] == 2  # nothing for s1: a cancelled request sends no reply
    assert proc.p.stdin is not None
    proc.p.stdin.close()
    code, out, err = proc.finish()
    assert code == 0 and out == b""
    assert b"slow: cancelled" in err


def test_eof_cancels_in_flight_work_and_exits_promptly(proc: Proc) -> None:
    proc.send(line(1, "slow", {"seconds": 60}) + "\n")
    proc.wait_stderr(b"slow: started")
    assert proc.p.stdin is not None
    started = time.monotonic()
    proc.p.stdin.close()
    code, _, err = proc.finish(timeout=10)
    assert code == 0 and time.monotonic() - started < 3
    assert b"slow: cancelled" in err


def test_both_eras_on_one_connection_and_legacy_server_requests(proc: Proc) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": "i",
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    proc.send(json.dumps(init) + "\n")
    assert proc.read()["result"]["protocolVersion"] == "2025-06-18"
    proc.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    legacy_call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {}},
    }
    proc.send(json.dumps(legacy_call) + "\n")
    outbound = proc.read()
    assert outbound["method"] == "elicitation/create" and "id" in outbound
    proc.send(line(6, "echo", {"text": "modern in between"}) + "\n")
    modern = proc.read()
    assert modern["id"] == 6 and modern["result"]["resultType"] == "complete"
    proc.send(
        json.dumps({"jsonrpc": "2.0", "id": outbound["id"], "result": {"action": "decline"}}) + "\n"
    )
    final = proc.read()
    assert final["id"] == 5 and final["result"]["content"][0]["text"] == "got decline"
    assert "resultType" not in final["result"]
    proc.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "initialize",
                "params": {
                    "_meta": META,
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        )
        + "\n"
    )
    assert proc.read()["error"]["code"] == -32601  # initialize with modern _meta is legacy-only
