"""A throwaway redis-server for tests: started on first use on a free loopback port,
in a temporary directory, with persistence off; stopped when the test run ends.

Missing `redis-server` fails the tests that need it (they skip with
MCPGEN_ALLOW_MISSING=redis-server, outside CI; `.ci/run` installs it).
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any

from tests.conftest import need

__all__ = ["RedisServer", "redis_url", "server"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="mcpgen-redis-")
        self.process: subprocess.Popen[bytes] | None = None
        for _ in range(5):  # a port found free can be taken before the server binds it
            self.port = _free_port()
            if self.start(may_fail=True):
                return
        raise RuntimeError("redis-server found no free port in 5 tries")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, may_fail: bool = False) -> bool:
        """Start the server on `self.port`; True once it answers there itself (its own
        process id, not another server's that took the port first). With `may_fail`,
        False when it exited (its port taken) instead of raising."""
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", self.dir]
        process = self.process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir
        )
        mine = b"process_id:%d\r\n" % process.pid
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if process.poll() is not None and may_fail:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                    sock.sendall(b"INFO server\r\n")
                    if mine in sock.recv(65536):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(5)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


_server: RedisServer | None = None


def server() -> RedisServer:
    """The shared test redis-server (skips, or fails in CI, when it is not installed)."""
    global _server
    if _server is None:
        binary = shutil.which("redis-server") or (
            "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None
        )
        need(binary is not None, "redis-server", "redis-server")
        assert binary is not None
        _server = RedisServer(binary)
        atexit.register(_server.close)
    return _server


_layout: Any = None  # a `redis_ha` layout, when MCPGEN_TEST_REDIS_LAYOUT names one


def redis_url() -> str:
    """The test Redis: one server, or, with MCPGEN_TEST_REDIS_LAYOUT=sentinel or
    cluster, a `redis_ha` layout (the contract tests run against each,
    `test_ha_contracts.py`)."""
    global _layout
    layout = os.environ.get("MCPGEN_TEST_REDIS_LAYOUT", "single")
    if layout == "single":
        return server().url
    if _layout is None:
        from tests.stores import redis_ha

        made = {"sentinel": redis_ha.SentinelLayout, "cluster": redis_ha.ClusterLayout}[layout]
        _layout = made()
        atexit.register(_layout.close)
    url: str = _layout.url
    return url
