"""Throwaway highly available Redis layouts for tests, from the Debian packages, on free
loopback ports, each process in a temporary directory of its own, persistence off:

- `SentinelLayout`: a primary, one replica and three sentinels (quorum 2), with short
  timeouts (down after 1 s, failover timeout 3 s) so a failover takes a few seconds.
- `ClusterLayout`: three masters joined by `redis-cli --cluster create`.

`close()` kills every process and removes the directories.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable

from tests.conftest import need
from tests.stores.redis_server import _free_port

__all__ = [
    "ClusterLayout",
    "Processes",
    "SentinelLayout",
    "binary",
    "command",
    "replicated",
    "server_argv",
]

SERVICE = "mcpgen-test"


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too."""
    while True:
        port = _free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


def binary(name: str) -> str:
    found = shutil.which(name)
    if found is None and os.path.exists(f"/usr/bin/{name}"):
        found = f"/usr/bin/{name}"
    need(found is not None, name)
    assert found is not None
    return found


def command(port: int, *args: str, timeout: float = 1.0) -> bytes:
    """One command, inline protocol, over a fresh connection; the raw reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(" ".join(args).encode() + b"\r\n")
        return sock.recv(65536)


def replicated(port: int, key: str) -> None:
    """Every write the primary at `port` took so far has reached a replica: a write of
    `key` (in the slot in question, under a Cluster), then `WAIT 1` on the same
    connection (a replica applies the stream in order)."""
    with socket.create_connection(("127.0.0.1", port), timeout=6) as sock:
        sock.sendall(f"SET {key} 1\r\nWAIT 1 5000\r\n".encode())
        got = b""
        while got.count(b"\r\n") < 2:
            got += sock.recv(256)
    assert got.split(b"\r\n")[:2] == [b"+OK", b":1"], got


def _wait(check: Callable[[], bool], what: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


class PortTakenError(RuntimeError):
    """The server could not take its port: another process bound it first."""


class Processes:
    def __init__(self, prefix: str) -> None:
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    def spawn(self, port: int, argv: list[str]) -> None:
        """Start a server on `port` and wait until *it* answers there: a port found free
        may be taken by another test's server before this one binds it (then this one
        exits, and the other would answer the PING): `PortTakenError` says so."""
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.dir
        )
        self.processes[port] = process
        mine = b"process_id:%d\r\n" % process.pid

        def ours() -> bool:
            if process.poll() is not None:
                raise PortTakenError(port)
            return mine in command(port, "INFO", "server")

        _wait(ours, f"port {port}")

    def start(self, argv: Callable[[int], list[str]], free: Callable[[], int] | None = None) -> int:
        """Start a server (`argv` for its port) on a free port; another port when the one
        found free was taken before the server could bind it. Returns the port."""
        for _ in range(5):
            port = (free or _free_port)()
            try:
                self.spawn(port, argv(port))
            except PortTakenError:
                del self.processes[port]
                continue
            return port
        raise RuntimeError("no free port after 5 tries")

    def node_dir(self, port: int) -> str:
        path = os.path.join(self.dir, str(port))
        os.makedirs(path, exist_ok=True)
        return path

    def kill(self, port: int, sig: int = signal.SIGKILL) -> None:
        process = self.processes[port]
        if process.poll() is None:
            process.send_signal(sig)
            if sig == signal.SIGKILL:
                process.wait(5)

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(5)
        self.processes.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


def server_argv(port: int, where: str) -> list[str]:
    argv = [binary("redis-server"), "--port", str(port), "--bind", "127.0.0.1"]
    return [*argv, "--save", "", "--appendonly", "no", "--dir", where]


class SentinelLayout(Processes):
    def __init__(self) -> None:
        super().__init__("mcpgen-sentinel-")
        self.primary = self.start(lambda port: server_argv(port, self.node_dir(port)))
        self.replica = self.start(
            lambda port: [
                *server_argv(port, self.node_dir(port)),
                *("--replicaof", "127.0.0.1", str(self.primary)),
            ]
        )
        _wait(self._replicating, "the replica's first sync")
        self.sentinels = [self.start(self._sentinel_argv) for _ in range(3)]
        _wait(self._sentinels_know_the_replica, "the sentinels to find the replica")

    def _sentinel_argv(self, port: int) -> list[str]:
        conf = os.path.join(self.node_dir(port), "sentinel.conf")
        with open(conf, "w") as out:
            out.write(
                f"port {port}\nbind 127.0.0.1\ndir {self.node_dir(port)}\n"
                f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary} 2\n"
                f"sentinel down-after-milliseconds {SERVICE} 1000\n"
                f"sentinel failover-timeout {SERVICE} 3000\n"
                f"sentinel parallel-syncs {SERVICE} 1\n"
            )
        # redis-sentinel is redis-server started in sentinel mode (the same binary)
        sentinel = shutil.which("redis-sentinel")
        return [sentinel, conf] if sentinel else [binary("redis-server"), conf, "--sentinel"]

    def _replicating(self) -> bool:
        return b"master_link_status:up" in command(self.replica, "INFO", "replication")

    def _sentinels_know_the_replica(self) -> bool:
        return all(
            str(self.replica).encode() in command(port, "SENTINEL", "replicas", SERVICE)
            for port in self.sentinels
        )

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinels)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def master(self) -> int:
        """The port the first sentinel names as the primary."""
        reply = command(self.sentinels[0], "SENTINEL", "get-master-addr-by-name", SERVICE)
        return int(reply.split(b"\r\n")[-2])


class ClusterLayout(Processes):
    def __init__(self, replicas: int = 0, extra: tuple[str, ...] = ()) -> None:
        super().__init__("mcpgen-cluster-")
        self.ports = [self._node(extra) for _ in range(3 * (1 + replicas))]
        nodes = [f"127.0.0.1:{port}" for port in self.ports]
        create = [binary("redis-cli"), "--cluster", "create", *nodes, "--cluster-yes"]
        subprocess.run(
            [*create, "--cluster-replicas", str(replicas)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        _wait(self._ok, "cluster_state:ok")
        if replicas:
            _wait(self._synced, "every replica's first sync")

    def _node(self, extra: tuple[str, ...]) -> int:
        """Start one cluster node on a free port whose bus port is free too."""

        def argv(port: int) -> list[str]:
            node = server_argv(port, self.node_dir(port))
            node += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            return [*node, "--cluster-node-timeout", "2000", *extra]

        return self.start(argv, _cluster_port)

    def _synced(self) -> bool:
        online = [command(p, "INFO", "replication").count(b"state=online") for p in self.ports]
        return sum(online) == len(self.ports) - 3

    def _ok(self) -> bool:
        return all(b"cluster_state:ok" in command(p, "CLUSTER", "INFO") for p in self.ports)

    def master_of(self, key: str) -> int:
        """The port of the master serving `key`'s hash slot (as a live node sees it)."""
        for port in self.ports:
            if self.processes[port].poll() is not None:
                continue
            slot = int(command(port, "CLUSTER", "KEYSLOT", key).strip()[1:])
            for line in command(port, "CLUSTER", "NODES").decode().splitlines():
                fields = line.split()
                if len(fields) < 9 or "master" not in fields[2] or "fail" in fields[2]:
                    continue
                for ranges in fields[8:]:
                    low, _, high = ranges.partition("-")
                    if low.isdigit() and int(low) <= slot <= int(high or low):
                        return int(fields[1].split(":")[1].split("@")[0])
        raise LookupError(key)

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)
